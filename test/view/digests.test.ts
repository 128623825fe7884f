/**
 * What an export keeps of each message (view/entry-digest.ts), beside the open index: the next
 * export, `bonsai view` and `bonsai tree` read it instead of every body, and must show exactly what
 * they show without it.
 */
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { SessionManager } from "../../src/session/manager.js";
import { digestColumns } from "../../src/view/digest-columns.js";
import { digestOf, type EntryDigest } from "../../src/view/entry-digest.js";
import { exportSession } from "../../src/view/export.js";
import { runBonsai } from "../helpers/cli.js";
import { useIndexDir } from "../helpers/index-env.js";
import { assistantMsg, tempDir, userMsg } from "../helpers/session-builders.js";
import { compactedExample, largeSession } from "../helpers/view-sessions.js";

const { dir, cleanup } = tempDir();
after(cleanup);

let indexDir = join(dir, "index");
useIndexDir(indexDir);

const folder = (name: string) => {
  const path = join(dir, name);
  mkdirSync(path, { recursive: true });
  return path;
};
const digestFiles = () => readdirSync(indexDir).filter((name) => name.endsWith(".digests.json"));
const withoutCaches = async <T>(run: () => Promise<T>): Promise<T> => {
  process.env.BONSAI_INDEX = "off";
  try {
    return await run();
  } finally {
    delete process.env.BONSAI_INDEX;
  }
};
const tree = async (file: string, env: NodeJS.ProcessEnv = {}) => {
  const run = await runBonsai(["tree", file], { BONSAI_INDEX_DIR: indexDir, ...env });
  assert.equal(run.code, 0, run.stderr);
  return run.stdout;
};

const thinkingAnswer = (text: string, thinking: string) => {
  const message = assistantMsg(text);
  return { ...message, content: [{ type: "thinking" as const, thinking }, ...message.content] };
};

/** Two siblings, the first in the file written later: the tree orders them by time, not by line. */
function siblingsOutOfOrder(): string {
  const file = join(folder("siblings"), "siblings.jsonl");
  const at = (second: number) => `2026-01-01T00:00:${String(second).padStart(2, "0")}.000Z`;
  const line = (id: string, parentId: string | null, second: number, message: object) => JSON.stringify({ type: "message", id, parentId, timestamp: at(second), message });
  const header = JSON.stringify({ type: "session", version: 3, id: "siblings", timestamp: at(0), cwd: "/work" });
  const lines = [header, line("a1", null, 1, userMsg("first question")), line("a2", "a1", 2, assistantMsg("an answer")), line("a3", "a2", 9, userMsg("written later, first in the file")), line("a4", "a2", 5, userMsg("written earlier, second in the file"))];
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

/** The example pruned and compacted by bonsai, with custom messages (one the context leaves out), a side branch and a label. */
async function variedSession(): Promise<string> {
  const { file } = await compactedExample(folder(`varied-${Math.random().toString(36).slice(2)}`));
  const session = SessionManager.open(file);
  const fork = session.appendCustomMessageEntry("note", "A note the model sees: keep `npm test` green.", true);
  session.appendCustomMessageEntry("status", [{ type: "text", text: "A status line only the user sees." }], false);
  const tip = session.appendMessage(thinkingAnswer("Release notes drafted.", "what changed since 1.2?"));
  session.appendLabelChange(tip, "drafted");
  session.branch(fork);
  session.appendMessage(userMsg("Another way: skip the release notes."));
  await session.close();
  return file;
}

describe("digests of messages", () => {
  it("read back from columns as they were kept, and anything of another shape reads as none", () => {
    const entry = { type: "message", id: "m1", parentId: null, timestamp: "2026-01-01T00:00:00.000Z", message: thinkingAnswer("Done.", "hm") } as const;
    const digests = new Map<string, EntryDigest>([
      ["m1", digestOf(entry as Parameters<typeof digestOf>[0])],
      ["m2", { timestamp: "t", kind: "status", preview: "x", tokens: 0, flags: {}, noMessage: true }],
      // a line may leave its timestamp out, and a provider may report a usage that is not whole
      ["m3", { kind: "assistant", preview: "y", tokens: 3, flags: {}, usage: 12.5 }],
    ]);
    const stored = JSON.parse(JSON.stringify(digestColumns.encode(digests)));
    assert.deepEqual(digestColumns.decode(stored), digests);
    for (const broken of [null, [], { ...stored, tokens: [1] }, { ...stored, previews: [1, 2] }, { ...stored, texts: [...stored.texts, 5] }, { ...stored, flags: [64, 0, 0] }]) {
      assert.equal(digestColumns.decode(broken).size, 0, JSON.stringify(broken).slice(0, 80));
    }
  });

  it("give the same page and the same tree as the bodies, bounded or not", async () => {
    const large = largeSession(folder("large"), 400).file;
    for (const [file, maxBytes] of [[await variedSession(), undefined], [large, 600 * 1024], [siblingsOutOfOrder(), undefined]] as const) {
      const options = { format: "html" as const, maxBytes, contextWindow: 200_000 };
      const first = await exportSession(file, options);
      assert.ok(digestFiles().length > 0, "the first export keeps the digests");
      assert.equal(await exportSession(file, options), first, `${file}: the page from the digests`);
      assert.equal(await withoutCaches(() => exportSession(file, options)), first, `${file}: the page without any cache`);
      assert.equal(await tree(file), await tree(file, { BONSAI_INDEX: "off" }), `${file}: the tree`);
    }
  });

  it("are read back, and worked out again after another program rewrote the file", async () => {
    indexDir = join(dir, "index-rewritten");
    process.env.BONSAI_INDEX_DIR = indexDir;
    const { file } = largeSession(folder("rewritten"), 300);
    const request = "Turn 299: please look at module299.ts";
    const options = { format: "html" as const, contextWindow: 200_000 };
    assert.match(await exportSession(file, options), new RegExp(request));
    const [kept] = digestFiles().filter((name) => readFileSync(join(indexDir, name), "utf8").includes(request));
    assert.ok(kept, "the digests of this session are kept");
    // the next export and the tree use what is kept: changed here to show that it is read
    const where = join(indexDir, kept);
    writeFileSync(where, readFileSync(where, "utf8").replace(request, "Read from the digest"));
    assert.match(await exportSession(file, options), /Read from the digest/);
    assert.match(await tree(file), /Read from the digest/);
    // another program writes the session anew: the same ids, another request
    writeFileSync(`${file}.tmp`, readFileSync(file, "utf8").replace(request, "Turn 299: look at payments.ts instead"));
    renameSync(`${file}.tmp`, file);
    const page = await exportSession(file, options);
    assert.match(page, /look at payments\.ts instead/);
    assert.doesNotMatch(page, /Read from the digest/);
    assert.match(await tree(file), /look at payments\.ts instead/);
  });

  it("the model at a leaf is the one its context names, read from the model source alone", async () => {
    const file = await variedSession();
    const session = SessionManager.open(file);
    try {
      for (const entry of session.getEntries()) assert.deepEqual(session.getContextModel(entry.id), session.buildSessionContext(entry.id).model, entry.id);
      assert.deepEqual(session.getContextModel(null), session.buildSessionContext(null).model);
    } finally {
      await session.close();
    }
  });
});
