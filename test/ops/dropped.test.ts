/**
 * Issue 28, item 4: what each compaction dropped. The facts of the summarized span the summary
 * does not mention, with the entry each was taken from; a fact the summary mentions, or one the
 * span itself retired (a corrected requirement), is not listed.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { droppedReport } from "../../src/ops/dropped.js";
import { SessionManager } from "../../src/session/manager.js";
import { runBonsai } from "../helpers/cli.js";
import { a, messageOf, tr, u } from "../helpers/paths.js";

const dir = mkdtempSync(join(tmpdir(), "bonsai-dropped-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function session(file: string, summary: string) {
  const s = SessionManager.open(file);
  const ids = {
    ask: s.appendMessage(messageOf(u("Add paging to `listInvoices` in src/invoices.ts. Serve it on port 8080."))),
    edit: s.appendMessage(messageOf(a("", { calls: [{ name: "edit", args: { path: "src/invoices.ts", oldText: "a", newText: "b" } }] }))),
    result: s.appendMessage(messageOf(tr("Successfully replaced text in src/invoices.ts.", "edit"))),
    fix: s.appendMessage(messageOf(u("No, not 8080, use 8443. Always keep `pageSize` at most 200."))),
    answer: s.appendMessage(messageOf(a("Done: `listInvoices` pages with `pageSize` up to 200 on 8443."))),
    kept: s.appendMessage(messageOf(u("Now the totals."))),
  };
  s.appendCompaction(summary, ids.kept, 1000);
  s.close();
  return ids;
}

describe("what a compaction dropped", () => {
  it("lists the span's facts its summary does not mention, linked to their entries, and nothing retired", async () => {
    const file = join(dir, "vague.jsonl");
    const ids = session(file, "## Goal\nPaging for the invoices list.");
    const [drops] = (await droppedReport(file)).compactions;
    const byText = new Map(drops.dropped.map((d) => [d.text, d]));
    assert.equal(byText.get("listInvoices")?.entryId, ids.ask, "an identifier, from the request that named it");
    assert.equal(byText.get("src/invoices.ts")?.kind, "file");
    assert.ok(drops.dropped.some((d) => d.kind === "constraint" && d.text.includes("8443") && d.entryId === ids.fix), JSON.stringify(drops.dropped));
    assert.deepEqual(drops.dropped.filter((d) => /port 8080/.test(d.text)), [], "the corrected port is not a fact to keep");
  });

  it("links each fact to the entry it was taken from, past entries without a message", async () => {
    const file = join(dir, "links.jsonl");
    const s = SessionManager.open(file);
    const ids = {
      ask: s.appendMessage(messageOf(u("Write the report generator for the billing team into src/report.ts please."))),
      note: s.appendCustomEntry("other.agent", { seen: "src/report.ts" }), // no message: holds nothing a fact is found in
      write: s.appendMessage(messageOf(a("", { calls: [{ name: "write", args: { path: "src/report.ts", content: "x" } }] }))),
      result: s.appendMessage(messageOf(tr("Wrote src/report.ts", "write"))),
      again: s.appendMessage(messageOf(u("Also mention src/report.ts in the changelog."))),
      kept: s.appendMessage(messageOf(u("Now the totals."))),
    };
    s.appendCompaction("## Goal\nA report.", ids.kept, 1000);
    s.close();
    const [drops] = (await droppedReport(file)).compactions;
    const byText = new Map(drops.dropped.map((d) => [d.text, d]));
    // the file changed is linked to the call that wrote it, not to the request that first named it
    assert.equal(byText.get("src/report.ts")?.entryId, ids.write, JSON.stringify(drops.dropped));
    assert.equal(byText.get("Also mention src/report.ts in the changelog.")?.entryId, ids.again);
  });

  it("links a sentence of a very long message to that message", async () => {
    // sentences are placed a fraction after their text; the ten-thousandth must not spill into the next entry
    const file = join(dir, "long.jsonl");
    const s = SessionManager.open(file);
    const rules = Array.from({ length: 9999 }, (_, i) => `Item ${i} must use port 8080.`).join(" ");
    const ids = {
      long: s.appendMessage(messageOf(u(`${rules} You must keep pageSize under 200.`))),
      noted: s.appendMessage(messageOf(a("Noted."))),
      fix: s.appendMessage(messageOf(u("No, not 8080, use 8443."))),
      kept: s.appendMessage(messageOf(u("Now the totals."))),
    };
    s.appendCompaction("## Goal\nTotals.", ids.kept, 1000);
    s.close();
    const [drops] = (await droppedReport(file)).compactions;
    const rule = drops.dropped.find((d) => d.text === "You must keep pageSize under 200.");
    assert.equal(rule?.entryId, ids.long, JSON.stringify(drops.dropped.slice(0, 5)));
  });

  it("lists nothing the summary mentions", async () => {
    const file = join(dir, "full.jsonl");
    session(file, "## Goal\nPaging for `listInvoices` in src/invoices.ts: No, not 8080, use 8443. Always keep `pageSize` at most 200.\nDone: `listInvoices` pages with `pageSize` up to 200 on 8443.");
    const [drops] = (await droppedReport(file)).compactions;
    assert.deepEqual(drops.dropped, []);
    assert.ok(drops.facts >= 4);
  });

  it("bonsai context --dropped prints them per compaction", async () => {
    const file = join(dir, "cli.jsonl");
    const ids = session(file, "## Goal\nPaging for the invoices list.");
    const run = await runBonsai(["context", file, "--dropped"]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^compaction [0-9a-f]{8}: summarized 5 entries; its summary mentions \d+ of \d+ facts\n/);
    assert.ok(run.stdout.includes(`dropped identifier: listInvoices (entry ${ids.ask})`), run.stdout);
  });
});
