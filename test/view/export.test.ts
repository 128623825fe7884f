/** `bonsai export` end to end: the page file, Markdown, the byte bound, database sessions, mistakes. */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { ViewModel } from "../../src/view/model.js";
import { SessionManager } from "../../src/session/manager.js";
import { exportSession } from "../../src/view/export.js";
import { startViewServer } from "../../src/view/server.js";
import { viewModelOf } from "../../src/view/source.js";
import { runBonsai } from "../helpers/cli.js";
import { useIndexDir } from "../helpers/index-env.js";
import { assistantMsg, tempDir, userMsg } from "../helpers/session-builders.js";
import { EXAMPLE } from "../helpers/view-sessions.js";
import { READABLE } from "../../src/view/bound.js";

const { dir, cleanup } = tempDir();
after(cleanup);

function embeddedModel(html: string): ViewModel {
  const match = /<script id="bonsai-data" type="application\/json">([\s\S]*?)<\/script>/.exec(html);
  assert.ok(match, "the model is embedded");
  return JSON.parse(match[1]) as ViewModel;
}

describe("bonsai export", () => {
  it("--html -o writes one self-contained page with every entry and body", async () => {
    const out = join(dir, "session.html");
    const run = await runBonsai(["export", EXAMPLE, "--html", "-o", out]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, "");
    const html = readFileSync(out, "utf8");
    assert.match(html, /^<!doctype html>/);
    assert.doesNotMatch(html, /<script[^>]+src=|<link[^>]+href=/, "nothing is loaded from elsewhere");
    assert.match(html, /default-src 'none'/);
    const model = embeddedModel(html);
    const lines = readFileSync(EXAMPLE, "utf8").trim().split("\n").length;
    assert.equal(model.nodes.length, lines - 1);
    assert.equal(Object.keys(model.bodies ?? {}).length, model.nodes.length);
    assert.equal(model.omitted, undefined);
    assert.ok(model.threshold && model.threshold.contextWindow > 0, "the window comes from the model registry");
  });

  it("--max-bytes bounds the page: long bodies are clipped to one length, each saying so", async () => {
    const out = join(dir, "small.html");
    const run = await runBonsai(["export", EXAMPLE, "--html", "-o", out, "--max-bytes", "300kb"]);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(statSync(out).size <= 300 * 1024, `${statSync(out).size}`);
    const model = embeddedModel(readFileSync(out, "utf8"));
    assert.ok(model.omitted && model.omitted.blocks > 0 && model.omitted.maxBytes === 300 * 1024);
    assert.equal(Object.keys(model.bodies ?? {}).length, model.nodes.length, "every body is kept");
    const clipped = Object.values(model.bodies ?? {}).flat().filter((b) => "clipped" in b && b.clipped);
    assert.equal(clipped.length, model.omitted.blocks);
  });

  it("a bound too tight for every body keeps the newest bodies of the active path, readable, and leaves out the rest", async () => {
    const out = join(dir, "tight.html");
    const run = await runBonsai(["export", EXAMPLE, "--html", "-o", out, "--max-bytes", "250kb"]);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(statSync(out).size <= 250 * 1024, `${statSync(out).size}`);
    const model = embeddedModel(readFileSync(out, "utf8"));
    const kept = new Set(Object.keys(model.bodies ?? {}));
    assert.ok(kept.size > 0 && kept.size < model.nodes.length, `${kept.size} of ${model.nodes.length} bodies kept`);
    const onPath = model.activePath.map((id) => kept.has(id));
    const firstKept = onPath.indexOf(true);
    assert.ok(firstKept > 0 && onPath.slice(firstKept).every(Boolean), "the kept bodies are the newest of the active path");
    for (const block of Object.values(model.bodies ?? {}).flat()) {
      const text = block.kind === "toolCall" ? block.args : "text" in block ? block.text : "";
      assert.ok(text.length <= READABLE, `a kept body is clipped to ${READABLE} characters at most, not ${text.length}`);
    }
    const clipped = Object.values(model.bodies ?? {}).flat().filter((b) => "clipped" in b && b.clipped);
    assert.ok(model.omitted && model.omitted.blocks > clipped.length, "the blocks left out are counted too");
  });

  it("--md prints the active path as Markdown; a database session exports the same", async () => {
    const file = await runBonsai(["export", EXAMPLE, "--md"]);
    assert.equal(file.code, 0, file.stderr);
    assert.match(file.stdout, /^# tasktrack/);
    const copy = await runBonsai(["copy", EXAMPLE, `sqlite:${join(dir, "s.db")}`]);
    assert.equal(copy.code, 0, copy.stderr);
    const location = /-> (sqlite:\S+#\S+)/.exec(copy.stdout)?.[1];
    assert.ok(location, copy.stdout);
    const db = await runBonsai(["export", location, "--md"]);
    assert.equal(db.code, 0, db.stderr);
    assert.equal(db.stdout, file.stdout, "the same Markdown from either store");
  });

  it("-o never writes over a session or a database of them (the one exported included), and replaces an earlier page", async () => {
    const session = join(dir, "to-keep.jsonl");
    writeFileSync(session, readFileSync(EXAMPLE));
    const slotted = join(dir, "omp-titled.jsonl"); // oh-my-pi's title line before the header
    writeFileSync(slotted, `${JSON.stringify({ type: "title", title: "a name".padEnd(200) })}\n${readFileSync(EXAMPLE, "utf8")}`);
    const db = join(dir, "store.db");
    assert.equal((await runBonsai(["copy", EXAMPLE, `sqlite:${db}`])).code, 0);
    for (const [target, kind] of [[session, "a session"], [slotted, "a session"], [db, "a SQLite database"]] as const) {
      const before = readFileSync(target);
      const run = await runBonsai(["export", session, "--md", "-o", target]);
      assert.equal(run.code, 1, run.stderr);
      assert.equal(run.stderr, `bonsai: export: ${target} holds ${kind}, which an export does not write over; choose another -o\n`);
      assert.deepEqual(readFileSync(target), before);
    }
    const page = join(dir, "again.md");
    writeFileSync(page, "an earlier export\n");
    assert.equal((await runBonsai(["export", session, "--md", "-o", page])).code, 0);
    assert.match(readFileSync(page, "utf8"), /^# tasktrack/);
  });

  it("refuses unclear requests with one line", async () => {
    // options that exclude each other are usage errors: exit 2, as commander's own
    const neither = await runBonsai(["export", EXAMPLE]);
    assert.equal(neither.code, 2);
    assert.equal(neither.stderr, "bonsai: export: pass one of --html or --md\n");
    const all = await runBonsai(["export", EXAMPLE, "--html", "--all"]);
    assert.equal(all.code, 2);
    assert.match(all.stderr, /--all goes with --md/);
    const size = await runBonsai(["export", EXAMPLE, "--md", "--max-bytes", "lots"]);
    assert.equal(size.code, 2);
    assert.match(size.stderr, /is not a size/);
    const tiny = await runBonsai(["export", EXAMPLE, "--html", "--max-bytes", "1kb"]);
    assert.equal(tiny.code, 1);
    assert.match(tiny.stderr, /--max-bytes 1024 is too small: the page without any bodies takes \d+ bytes/);
    const missing = await runBonsai(["export", join(dir, "nope.jsonl"), "--md"]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no such file/);
  });
});

/** Issue 26, defect 3: a page is made to be mailed; a PostgreSQL password in its location must not be in it. */
describe("a database password stays out of the page", () => {
  it("the view model names the location without its password", async () => {
    const session = SessionManager.open(EXAMPLE, { readOnly: true });
    try {
      const model = await viewModelOf(session, "postgres://alice:S3cr3t-pw@db.internal:5432/agents#019cebb8", { contextWindow: 200_000 });
      const text = JSON.stringify(model);
      assert.doesNotMatch(text, /S3cr3t-pw/);
      assert.match(text, /postgres:\/\/alice@db\.internal:5432\/agents#019cebb8/);
    } finally {
      void session.close();
    }
  });
});

/** What each compaction dropped is found once and kept beside the open index (storage/derived-cache.ts). */
describe("an export keeps what each compaction dropped", () => {
  const indexDir = join(dir, "drops-index");
  useIndexDir(indexDir);

  async function vague(file: string, identifier: string): Promise<string> {
    const session = SessionManager.open(file);
    session.appendMessage(userMsg(`Add paging to \`${identifier}\` in src/invoices.ts.`));
    session.appendMessage(assistantMsg(`Paging is in: \`${identifier}\` takes a cursor.`));
    const kept = session.appendMessage(userMsg("Now the totals."));
    const id = session.appendCompaction("## Goal\nPaging for the invoices list.", kept, 1000);
    await session.close();
    return id;
  }
  const droppedOf = async (file: string, compactionId: string) =>
    embeddedModel(await exportSession(file, { format: "html" })).nodes.find((n) => n.id === compactionId)?.compaction?.dropped?.filter((d) => d.kind === "identifier").map((d) => d.text);

  it("reads them back on the next export, and works them out again after another program rewrote the file", async () => {
    const file = join(dir, "drops-cached.jsonl");
    const compactionId = await vague(file, "listInvoices");
    assert.deepEqual(await droppedOf(file, compactionId), ["listInvoices"]);
    const cached = readdirSync(indexDir).filter((name) => name.endsWith(".drops.json"));
    assert.equal(cached.length, 1, "kept beside the open index");
    // the next export uses what is kept: changed here to show that it is read
    const where = join(indexDir, cached[0]);
    writeFileSync(where, readFileSync(where, "utf8").replace('"text":"listInvoices"', '"text":"from the cache"'));
    assert.deepEqual(await droppedOf(file, compactionId), ["from the cache"]);
    // and so does `bonsai view`
    const server = await startViewServer(file, { contextWindow: 200_000 });
    try {
      const live = (await (await fetch(`${server.url}api/model`)).json()) as ViewModel;
      const info = live.nodes.find((n) => n.id === compactionId)?.compaction;
      assert.deepEqual(info?.dropped?.filter((d) => d.kind === "identifier").map((d) => d.text), ["from the cache"]);
    } finally {
      await server.close();
    }

    // another program writes the session anew, with the same compaction id and another span
    const other = join(dir, "drops-other.jsonl");
    const otherId = await vague(other, "listOrders");
    const rewritten = readFileSync(other, "utf8").replaceAll(otherId, compactionId);
    writeFileSync(`${file}.tmp`, rewritten);
    renameSync(`${file}.tmp`, file);
    assert.deepEqual(await droppedOf(file, compactionId), ["listOrders"]);
    process.env.BONSAI_INDEX = "off";
    assert.deepEqual(await droppedOf(file, compactionId), ["listOrders"], "as without any cache");
    delete process.env.BONSAI_INDEX;
  });
});
