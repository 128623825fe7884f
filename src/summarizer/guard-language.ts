/**
 * The words of what bonsai appends to every summary (the verbatim requests, the coverage check's
 * appendix, the pinned texts) in the language the user writes in, so an Italian conversation gets
 * Italian headings and labels beside its Italian summary. The language is guessed from the user's
 * own words by their most frequent function words; English when unsure. Reading a stored summary
 * back accepts every language's words, so a summary written in one reads in any other. Pure.
 */
/** The kinds of fact the coverage check looks for (coverage.ts), each with a label here. */
export type CoverageKind = "request" | "question" | "unanswered" | "error" | "constraint" | "decision" | "file";

export type GuardLanguage = "en" | "it" | "de" | "fr" | "es";

export interface GuardWords {
  requests: string;
  coverage: string;
  pinned: string;
  labels: Record<CoverageKind, string>;
}

export const GUARD_WORDS: Record<GuardLanguage, GuardWords> = {
  en: {
    requests: "## User requests (verbatim, newest first)",
    coverage: "## Also in the conversation (coverage check)",
    pinned: "## Pinned (verbatim)",
    labels: {
      request: "Latest request",
      question: "Open question",
      unanswered: "Question not answered yet",
      error: "Unresolved error",
      constraint: "Constraint",
      decision: "Decision",
      file: "Modified",
    },
  },
  it: {
    requests: "## Richieste dell'utente (testuali, dalla più recente)",
    coverage: "## Anche nella conversazione (controllo di copertura)",
    pinned: "## Fissati (testuali)",
    labels: {
      request: "Ultima richiesta",
      question: "Domanda aperta",
      unanswered: "Domanda ancora senza risposta",
      error: "Errore non risolto",
      constraint: "Vincolo",
      decision: "Decisione",
      file: "Modificato",
    },
  },
  de: {
    requests: "## Anfragen des Nutzers (wörtlich, neueste zuerst)",
    coverage: "## Außerdem im Gespräch (Abdeckungsprüfung)",
    pinned: "## Angeheftet (wörtlich)",
    labels: {
      request: "Letzte Anfrage",
      question: "Offene Frage",
      unanswered: "Noch unbeantwortete Frage",
      error: "Ungelöster Fehler",
      constraint: "Vorgabe",
      decision: "Entscheidung",
      file: "Geändert",
    },
  },
  fr: {
    requests: "## Demandes de l'utilisateur (mot pour mot, la plus récente d'abord)",
    coverage: "## Aussi dans la conversation (contrôle de couverture)",
    pinned: "## Épinglé (mot pour mot)",
    labels: {
      request: "Dernière demande",
      question: "Question ouverte",
      unanswered: "Question encore sans réponse",
      error: "Erreur non résolue",
      constraint: "Contrainte",
      decision: "Décision",
      file: "Modifié",
    },
  },
  es: {
    requests: "## Peticiones del usuario (literales, la más reciente primero)",
    coverage: "## También en la conversación (control de cobertura)",
    pinned: "## Fijado (literal)",
    labels: {
      request: "Última petición",
      question: "Pregunta abierta",
      unanswered: "Pregunta aún sin respuesta",
      error: "Error sin resolver",
      constraint: "Restricción",
      decision: "Decisión",
      file: "Modificado",
    },
  },
};

const LANGUAGES = Object.keys(GUARD_WORDS) as GuardLanguage[];

/** Words frequent in each language and rare in the others. */
const FUNCTION_WORDS: Record<GuardLanguage, ReadonlySet<string>> = {
  en: new Set("the and to of is it that with for this you please should can what not".split(" ")),
  it: new Set("il che di non per con una sono della anche poi questo gli nel alla così deve".split(" ")),
  de: new Set("der die und nicht ist mit das ich auf für sodass auch bitte den dem eine".split(" ")),
  fr: new Set("le les des est pas pour avec une que dans aussi cette sont du au".split(" ")),
  es: new Set("el los que con para una por las del también esta son pero como".split(" ")),
};

/** The language most of `texts` are written in, by their function words; English when none stands out. */
export function conversationLanguage(texts: readonly string[]): GuardLanguage {
  const counts = new Map<GuardLanguage, number>(LANGUAGES.map((language) => [language, 0]));
  // prose only: code spans, paths and file names are no language ("de.json", `el`). Words are
  // split on whitespace rather than matched with /\S*[/.]\S*/, which backtracks quadratically
  // over a long run without spaces (a pasted blob took seconds).
  const words = texts.join(" ").replace(/`[^`\n]*`/g, " ").split(/\s+/);
  const prose = words.filter((word) => !word.includes("/") && !word.includes(".")).join(" ").toLowerCase();
  for (const word of prose.match(/\p{L}+/gu) ?? []) {
    for (const language of LANGUAGES) if (FUNCTION_WORDS[language].has(word)) counts.set(language, (counts.get(language) ?? 0) + 1);
  }
  const [best, score] = [...counts].sort((a, b) => b[1] - a[1])[0];
  // a handful of hits is not a language, and English must be clearly outnumbered: English stays the default
  return score >= 4 && score >= 2 * (counts.get("en") ?? 0) ? best : "en";
}

/** Every language's heading of one section, for reading a stored summary back. */
export const anyHeading = (section: "requests" | "coverage" | "pinned"): string[] => LANGUAGES.map((language) => GUARD_WORDS[language][section]);

/** The kind a label of the coverage appendix names, in whichever language it was written. */
export function labelKind(label: string): CoverageKind | undefined {
  for (const language of LANGUAGES) {
    for (const [kind, text] of Object.entries(GUARD_WORDS[language].labels)) if (text === label) return kind as CoverageKind;
  }
  return undefined;
}
