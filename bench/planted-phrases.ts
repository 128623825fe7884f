/**
 * What the people in a planted session say (bench/planted-sessions.ts), in English, Italian and
 * German: the user's requests, constraints and corrections, the agent's decisions, reversals,
 * reports and questions. Written for the bench, one set per language, so that the summarizers are
 * measured on conversations that are not in English too. `{ident}`, `{type}`, `{helper}` and
 * `{area}` are filled in per chapter.
 */
export type PlantedLanguage = "en" | "it" | "de";
export const PLANTED_LANGUAGES: readonly PlantedLanguage[] = ["en", "it", "de"];

export interface Phrases {
  tasks: string[];
  constraints: string[];
  decisions: string[];
  questions: string[];
  /** the user's request; `answer` when it also answers the agent's last question */
  request(answer: boolean, ident: string, file: string, task: string): string;
  /** the part of the request a summary must keep */
  requestFact(ident: string, file: string, task: string): string;
  pastedIntro: string;
  /** a rule stated with the request, later corrected, and the words a summary keeps of it */
  batchRule(size: number): string;
  batchFact(size: number): string;
  correction(before: number, after: number): string;
  correctionFact(after: number): string;
  readFirst: string;
  keepSmall: string;
  /** a decision, and the reversal that replaces it */
  choose(first: string): string;
  reverse(second: string, first: string): string;
  fixing(helper: string): string;
  done(ident: string, task: string): string;
  stillFails(file: string): string;
  /** a new request that passes over the agent's last question without answering it */
  unrelated(ident: string, file: string): string;
}

const en: Phrases = {
  tasks: [
    "round half-up to two decimals",
    "skip line items whose quantity is zero",
    "treat a missing currency as EUR",
    "reject dates before the account was opened",
    "keep the original order of the entries",
    "report every rejected row instead of stopping at the first",
    "accept amounts written with a comma as decimal separator",
    "cap the discount at the invoice subtotal",
  ],
  constraints: [
    "Never change the exported type {type}.",
    "Don't add a new runtime dependency for this.",
    "You must keep {ident} a pure function with no I/O.",
    "Always use integer cents, never floating point, for {type} amounts.",
    "Prefer small helper functions over a new class.",
    "Make sure the existing snapshot tests keep passing unchanged.",
    "Avoid touching the database schema in migrations/.",
    "Only edit files under src/{area}/ and test/{area}/.",
  ],
  decisions: [
    "I decided to move the rounding into {helper} because three callers repeat it.",
    "The fix is to compare cents instead of floats, since 0.1 + 0.2 drifts.",
    "I chose a lookup table over a switch because the rates change every quarter.",
    "I went with an early return instead of a nested condition, which keeps {ident} readable.",
    "Instead of patching every caller, {helper} now normalizes the input once.",
    "I opted to keep the old behaviour behind {helper} because the exporter still relies on it.",
  ],
  questions: [
    "Should I also update the CSV exporter in src/exports/csv.ts?",
    "Do you want the changelog entry under Fixed or under Changed?",
    "Should {helper} also be used by the refund flow?",
    "Do you want me to backfill the test data for last quarter as well?",
    "Should the warning be logged or returned to the caller?",
  ],
  request: (answer, ident, file, task) => `${answer ? "Yes, go ahead with that too. " : ""}Next, change \`${ident}\` in ${file} so that it will ${task}.`,
  requestFact: (ident, file, task) => `Next, change \`${ident}\` in ${file} so that it will ${task}.`,
  pastedIntro: "CI printed this on the last run:",
  batchRule: (size) => ` Process them in batches of ${size}.`,
  batchFact: (size) => `batches of ${size}`,
  correction: (before, after) => `Correction: not ${before}, use ${after} per batch.`,
  correctionFact: (after) => `use ${after} per batch`,
  readFirst: "Let me read the current implementation first.",
  keepSmall: "I'll keep the change small.",
  choose: (first) => `I'll keep the rates in \`${first}\` rather than recomputing them on every call.`,
  reverse: (second, first) => `Switching to \`${second}\` instead of \`${first}\`: the in-process cache is cleared on every deploy.`,
  fixing: (helper) => `The type error is in ${helper}; fixing the signature.`,
  done: (ident, task) => `Done: \`${ident}\` now will ${task}, and the typecheck passes.`,
  stillFails: (file) => `The typecheck still fails in ${file}; the fix needs the new type first.`,
  unrelated: (ident, file) => `Next, change \`${ident}\` in ${file} as well.`,
};

const it: Phrases = {
  tasks: [
    "arrotondi a due decimali",
    "salti le righe con quantità zero",
    "tratti una valuta mancante come EUR",
    "rifiuti le date precedenti all'apertura del conto",
    "mantenga l'ordine originale delle voci",
    "segnali ogni riga rifiutata invece di fermarsi alla prima",
    "accetti importi scritti con la virgola come separatore decimale",
    "limiti lo sconto al subtotale della fattura",
  ],
  constraints: [
    "Non cambiare mai il tipo esportato {type}.",
    "Non aggiungere nuove dipendenze di runtime per questo.",
    "{ident} deve restare una funzione pura, senza I/O.",
    "Usa sempre centesimi interi, mai numeri in virgola mobile, per gli importi di {type}.",
    "Preferisco piccole funzioni di supporto a una nuova classe.",
    "Assicurati che i test snapshot esistenti continuino a passare senza modifiche.",
    "Evita di toccare lo schema del database in migrations/.",
    "Modifica solo i file in src/{area}/ e test/{area}/.",
  ],
  decisions: [
    "Ho deciso di spostare l'arrotondamento in {helper} perché tre chiamanti lo ripetono.",
    "La soluzione è confrontare centesimi invece di float, perché 0.1 + 0.2 non torna.",
    "Ho scelto una tabella di lookup invece di uno switch perché le aliquote cambiano ogni trimestre.",
    "Ho scelto un return anticipato invece di una condizione annidata, così {ident} resta leggibile.",
    "Invece di correggere ogni chiamante, {helper} ora normalizza l'input una volta sola.",
    "Ho deciso di tenere il vecchio comportamento dietro {helper} perché l'esportatore ne dipende ancora.",
  ],
  questions: [
    "Aggiorno anche l'esportatore CSV in src/exports/csv.ts?",
    "Vuoi la voce del changelog sotto Fixed o sotto Changed?",
    "Anche il flusso dei rimborsi dovrebbe usare {helper}?",
    "Vuoi che recuperi anche i dati di test dell'ultimo trimestre?",
    "L'avviso va registrato nel log o restituito al chiamante?",
  ],
  request: (answer, ident, file, task) => `${answer ? "Sì, procedi anche con quello. " : ""}Poi modifica \`${ident}\` in ${file} in modo che ${task}.`,
  requestFact: (ident, file, task) => `Poi modifica \`${ident}\` in ${file} in modo che ${task}.`,
  pastedIntro: "La CI ha stampato questo nell'ultima esecuzione:",
  batchRule: (size) => ` Elaborali in lotti da ${size}.`,
  batchFact: (size) => `lotti da ${size}`,
  correction: (before, after) => `Correzione: non ${before}, usa ${after} per lotto.`,
  correctionFact: (after) => `usa ${after} per lotto`,
  readFirst: "Prima leggo l'implementazione attuale.",
  keepSmall: "Terrò la modifica piccola.",
  choose: (first) => `Terrò le aliquote in \`${first}\` invece di ricalcolarle a ogni chiamata.`,
  reverse: (second, first) => `Passo a \`${second}\` invece di \`${first}\`: la cache in memoria si svuota a ogni deploy.`,
  fixing: (helper) => `L'errore di tipo è in ${helper}; correggo la firma.`,
  done: (ident, task) => `Fatto: \`${ident}\` ora fa in modo che ${task}, e il typecheck passa.`,
  stillFails: (file) => `Il typecheck fallisce ancora in ${file}; per correggerlo serve prima il nuovo tipo.`,
  unrelated: (ident, file) => `Poi modifica anche \`${ident}\` in ${file}.`,
};

const de: Phrases = {
  tasks: [
    "auf zwei Dezimalstellen kaufmännisch rundet",
    "Positionen mit Menge null überspringt",
    "eine fehlende Währung als EUR behandelt",
    "Daten vor der Kontoeröffnung ablehnt",
    "die ursprüngliche Reihenfolge der Einträge beibehält",
    "jede abgelehnte Zeile meldet, statt bei der ersten abzubrechen",
    "Beträge mit Komma als Dezimaltrennzeichen akzeptiert",
    "den Rabatt auf die Zwischensumme der Rechnung begrenzt",
  ],
  constraints: [
    "Ändere niemals den exportierten Typ {type}.",
    "Bitte keine neue Laufzeitabhängigkeit dafür hinzufügen.",
    "{ident} muss eine reine Funktion ohne I/O bleiben.",
    "Verwende für {type}-Beträge immer ganze Cent, nie Gleitkommazahlen.",
    "Ich bevorzuge kleine Hilfsfunktionen gegenüber einer neuen Klasse.",
    "Die bestehenden Snapshot-Tests müssen unverändert grün bleiben.",
    "Vermeide Änderungen am Datenbankschema in migrations/.",
    "Bearbeite nur Dateien unter src/{area}/ und test/{area}/.",
  ],
  decisions: [
    "Ich habe entschieden, die Rundung in {helper} zu verschieben, weil drei Aufrufer sie wiederholen.",
    "Die Lösung ist, Cent statt Gleitkommazahlen zu vergleichen, weil 0.1 + 0.2 abweicht.",
    "Ich habe eine Lookup-Tabelle statt eines Switch gewählt, weil sich die Sätze jedes Quartal ändern.",
    "Ich habe ein frühes Return statt einer verschachtelten Bedingung gewählt, damit {ident} lesbar bleibt.",
    "Statt jeden Aufrufer anzupassen, normalisiert {helper} die Eingabe jetzt einmal.",
    "Ich habe entschieden, das alte Verhalten hinter {helper} zu behalten, weil der Exporter noch darauf angewiesen ist.",
  ],
  questions: [
    "Soll ich auch den CSV-Exporter in src/exports/csv.ts anpassen?",
    "Soll der Changelog-Eintrag unter Fixed oder unter Changed stehen?",
    "Soll {helper} auch im Erstattungsablauf verwendet werden?",
    "Soll ich auch die Testdaten des letzten Quartals nachtragen?",
    "Soll die Warnung geloggt oder an den Aufrufer zurückgegeben werden?",
  ],
  request: (answer, ident, file, task) => `${answer ? "Ja, mach das auch. " : ""}Als Nächstes ändere \`${ident}\` in ${file}, sodass es ${task}.`,
  requestFact: (ident, file, task) => `Als Nächstes ändere \`${ident}\` in ${file}, sodass es ${task}.`,
  pastedIntro: "Die CI hat beim letzten Lauf das hier ausgegeben:",
  batchRule: (size) => ` Verarbeite sie in Blöcken von ${size}.`,
  batchFact: (size) => `Blöcken von ${size}`,
  correction: (before, after) => `Korrektur: nicht ${before}, sondern ${after} pro Block.`,
  correctionFact: (after) => `${after} pro Block`,
  readFirst: "Ich lese zuerst die aktuelle Implementierung.",
  keepSmall: "Ich halte die Änderung klein.",
  choose: (first) => `Ich lege die Sätze in \`${first}\` ab, statt sie bei jedem Aufruf neu zu berechnen.`,
  reverse: (second, first) => `Ich wechsle zu \`${second}\` statt \`${first}\`: der Cache im Prozess wird bei jedem Deploy geleert.`,
  fixing: (helper) => `Der Typfehler liegt in ${helper}; ich korrigiere die Signatur.`,
  done: (ident, task) => `Erledigt: \`${ident}\` ist jetzt so, dass es ${task}, und der Typecheck läuft durch.`,
  stillFails: (file) => `Der Typecheck schlägt in ${file} weiterhin fehl; für die Korrektur braucht es zuerst den neuen Typ.`,
  unrelated: (ident, file) => `Als Nächstes ändere auch \`${ident}\` in ${file}.`,
};

export const PHRASES: Record<PlantedLanguage, Phrases> = { en, it, de };
