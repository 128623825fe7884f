/**
 * What bonsai appends to a summary speaks the user's language: the verbatim requests' heading, the
 * coverage check's heading and labels, the pinned section's heading. A stored summary in any of
 * those languages reads back the same (requests, carried items, pinned section removed).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { conversationLanguage, GUARD_WORDS, labelKind } from "../../src/summarizer/guard-language.js";
import { guardSummary, renderPinned, splitGuardSections, withoutPinned } from "../../src/summarizer/summary-guard.js";

const estimate = (text: string) => Math.ceil(text.length / 4);

describe("the conversation's language", () => {
  it("is told by the user's function words, English when unsure", () => {
    assert.equal(conversationLanguage(["Poi modifica il file così che non usi variabili globali, per favore. Anche i test della cartella."]), "it");
    assert.equal(conversationLanguage(["Bitte keine globalen Variablen verwenden, und die Tests müssen mit dem neuen Typ laufen."]), "de");
    assert.equal(conversationLanguage(["Ajoute le support des étiquettes dans la commande, avec les tests pour cette partie."]), "fr");
    assert.equal(conversationLanguage(["Añade el soporte para las etiquetas con los tests del comando, también para la salida."]), "es");
    assert.equal(conversationLanguage(["Add the flag to the CLI, and make sure it is documented."]), "en");
    assert.equal(conversationLanguage(["fix src/a.ts"]), "en", "too few words to tell");
    assert.equal(conversationLanguage(["Copy en.json to de.json, de-CH.json and de-AT.json, then the `el` and `del` keys."]), "en", "file names and code are no language");
 
  });

  it("reads a pasted blob without spaces in one pass", { timeout: 20_000 }, () => {
    // /\S*[/.]\S*/ took about 30 s here: it backtracked over the whole blob from every position
    const blob = "Q".repeat(2_000_000);
    assert.equal(conversationLanguage([`Poi modifica il file così che non usi ${blob} variabili globali, per favore. Anche i test della cartella.`]), "it");
    assert.equal(conversationLanguage([`${blob}/x.ts il che di non per`, "il che"]), "it", "the blob with a slash is a path; the words after it count");
  });
});

describe("the guard's sections", () => {
  const conversation = [
    "[User]: Poi modifica `toCents` in src/money.ts così che arrotondi a due decimali. Non usare mai numeri in virgola mobile per gli importi.",
    "[Assistant]: Fatto. Aggiorno anche il changelog?",
  ].join("\n\n");

  it("are headed and labelled in Italian for an Italian conversation, and read back", () => {
    const guarded = guardSummary({ summary: "## Goal\nArrotondamento.", conversation, modifiedFiles: ["src/money.ts"] }, {}, estimate);
    assert.equal(guarded.language, "it");
    assert.match(guarded.text, /^## Anche nella conversazione \(controllo di copertura\)$/m);
    assert.match(guarded.text, /^- Domanda aperta: Aggiorno anche il changelog\?$/m);
    assert.match(guarded.text, /^## Richieste dell'utente \(testuali, dalla più recente\)$/m);
    const back = splitGuardSections(guarded.text);
    assert.equal(back.body, "## Goal\nArrotondamento.");
    assert.equal(back.requests.length, 1);
    assert.deepEqual(back.carried, [{ kind: "question", text: "Aggiorno anche il changelog?" }]);
    // without the requests section, the constraint is appended, labelled in Italian, and carried
    const unquoted = guardSummary({ summary: "## Goal\nArrotondamento.", conversation, modifiedFiles: [] }, { verbatimRequests: false }, estimate);
    assert.match(unquoted.text, /^- Vincolo: Non usare mai numeri in virgola mobile per gli importi\.$/m);
    assert.ok(splitGuardSections(unquoted.text).carried.some((item) => item.kind === "constraint" && item.text.startsWith("Non usare mai")));
  });

  it("read a German summary's pinned section and labels back, whatever language the next one is in", () => {
    const pinned = renderPinned([{ entryId: "a1b2c3d4", text: "Immer Tabs verwenden." }], estimate, GUARD_WORDS.de);
    assert.match(pinned, /^## Angeheftet \(wörtlich\)$/m);
    assert.equal(withoutPinned(`## Goal\nx\n\n${pinned}`), "## Goal\nx");
    assert.equal(labelKind("Vorgabe"), "constraint");
    assert.equal(labelKind("Domanda ancora senza risposta"), "unanswered");
    assert.equal(labelKind("Nonsense"), undefined);
  });
});
