/**
 * Deferred message bodies (OpenOptions.bodies): a session opened "checked" or "trusted" answers
 * exactly like one loaded in full, reads only what it is asked for, and says so clearly when the
 * bytes it deferred are no longer there.
 */
import assert from "node:assert/strict";
import { closeSync, openSync, readdirSync, readFileSync, renameSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { InvalidBodyError, readMessagePrefix } from "../../src/storage/bodies.js";
import { loadSessionIndex } from "../../src/storage/load.js";
import { IdTable } from "../../src/session/id-table.js";
import { SessionManager } from "../../src/session/manager.js";
import { toJsonl } from "../../src/storage/file-writer.js";
import { flattenTree, TreeIndex } from "../../src/session/tree.js";
import type { SessionEntry } from "../../src/format/entry-types.js";
import { conformanceCases } from "../helpers/fixtures.js";
import { assistantEntry, entry, msg, tempDir, toolResultMsg, userEntry } from "../helpers/session-builders.js";

const { dir: DIR, cleanup } = tempDir();
after(cleanup);

const HEADER = { type: "session", version: 3, id: "sess", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" };
let counter = 0;
function writeSession(entries: unknown[]): string {
  const file = join(DIR, `s${++counter}.jsonl`);
  writeFileSync(file, toJsonl([HEADER, ...entries]));
  return file;
}

const MODES = ["parsed", "checked", "trusted"] as const;
const shape = (s: SessionManager) => flattenTree(s.getTree()).map(({ node, depth }) => [node.entry.id, depth, node.label ?? null]);

describe("deferred bodies answer like a full load", () => {
  for (const { name, file } of conformanceCases()) {
    it(`${name}: contexts of every leaf, branches, entries and tree`, () => {
      const eager = SessionManager.open(file, { readOnly: true, bodies: "eager" });
      const ids = eager.getEntries().map((e) => e.id);
      for (const mode of MODES) {
        // contexts and branches first, while the bodies are still on disk
        const lazy = SessionManager.open(file, { readOnly: true, bodies: mode });
        assert.deepEqual(lazy.buildSessionContext(), eager.buildSessionContext(), `${mode}: leaf context`);
        for (const id of ids) {
          assert.deepEqual(lazy.buildSessionContext(id), eager.buildSessionContext(id), `${mode}: context at ${id}`);
        }
        assert.deepEqual(lazy.buildSessionContext(null), eager.buildSessionContext(null));
        const fresh = SessionManager.open(file, { readOnly: true, bodies: mode });
        for (const id of ids) assert.deepEqual(fresh.getBranch(id), eager.getBranch(id), `${mode}: branch at ${id}`);
        assert.deepEqual(lazy.getEntries(), eager.getEntries());
        assert.deepEqual(shape(lazy), shape(eager));
        assert.equal(lazy.getLeafId(), eager.getLeafId());
        lazy.close();
        fresh.close();
      }
    });
  }

  it("keeps the model, thinking level and kept entries of a compaction across deferred paths", () => {
    const entries: SessionEntry[] = [
      entry("thinking_level_change", "t1", null, { thinkingLevel: "high" }, 1),
      userEntry("u1", "t1", "first", 2),
      assistantEntry("a1", "u1", "answer", 3, "model-a"),
      userEntry("u2", "a1", "second", 4),
      msg("r2", "u2", toolResultMsg("output"), 5),
      entry("compaction", "c1", "r2", { summary: "so far", firstKeptEntryId: "u2", tokensBefore: 500 }, 6),
      entry("model_change", "m1", "c1", { provider: "p", modelId: "side", role: "smol" }, 7),
      userEntry("u3", "m1", "third", 8),
      // a compaction whose first kept entry is not on its path keeps nothing from before it
      entry("compaction", "c2", "u1", { summary: "other", firstKeptEntryId: "u3", tokensBefore: 9 }, 9),
      userEntry("u4", "c2", "fourth", 10),
    ];
    const file = writeSession(entries);
    const eager = SessionManager.open(file, { readOnly: true, bodies: "eager" });
    for (const mode of MODES) {
      for (const leaf of ["u3", "u4", "c1", "a1"]) {
        const lazy = SessionManager.open(file, { readOnly: true, bodies: mode });
        assert.deepEqual(lazy.buildSessionContext(leaf), eager.buildSessionContext(leaf), `${mode} at ${leaf}`);
      }
    }
    const context = eager.buildSessionContext("u3");
    assert.equal(context.thinkingLevel, "high");
    assert.deepEqual(context.model, { provider: "anthropic", modelId: "model-a" });
    assert.deepEqual(
      context.messages.map((m) => m.role),
      ["compactionSummary", "user", "toolResult", "user"],
    );
    assert.deepEqual(eager.buildSessionContext("u4").messages.map((m) => m.role), ["compactionSummary", "user"]);
  });

  it("reads a parent that comes after its child in the file like a full load does", () => {
    const file = writeSession([userEntry("b", "a", "child first", 2), userEntry("a", null, "parent", 1), userEntry("c", "b", "leaf", 3)]);
    const eager = SessionManager.open(file, { readOnly: true, bodies: "eager" });
    const lazy = SessionManager.open(file, { readOnly: true, bodies: "trusted" });
    assert.deepEqual(lazy.buildSessionContext(), eager.buildSessionContext());
    assert.deepEqual(eager.buildSessionContext().messages.length, 3);
    assert.deepEqual(shape(lazy), shape(eager));
  });
});

describe("what a deferred open reads", () => {
  /** A long history, a compaction, and a short tail: the context needs only the tail and the kept part. */
  function longSession(): { file: string; text: string } {
    const entries: SessionEntry[] = [];
    let parent: string | null = null;
    for (let i = 0; i < 200; i++) {
      const id = `m${i}`;
      entries.push(i % 2 ? assistantEntry(id, parent, `answer ${i}`, i) : userEntry(id, parent, `question ${i}`, i));
      parent = id;
    }
    entries.push(entry("compaction", "cmp", parent, { summary: "earlier", firstKeptEntryId: "m196", tokensBefore: 1 }, 300));
    entries.push(userEntry("tail", "cmp", "after", 301));
    const file = writeSession(entries);
    return { file, text: readFileSync(file, "utf8") };
  }

  /** Overwrites one line in place with bytes of the same length that are not that entry. */
  function damageLine(file: string, text: string, id: string): void {
    const start = text.indexOf(`"id":"${id}"`);
    const lineStart = text.lastIndexOf("\n", start) + 1;
    const lineEnd = text.indexOf("\n", start);
    const fd = openSync(file, "r+");
    writeSync(fd, Buffer.from("x".repeat(lineEnd - lineStart)), 0, lineEnd - lineStart, lineStart);
    closeSync(fd);
  }

  for (const mode of MODES) {
    it(`${mode}: builds the context without reading bodies before the compaction's kept part`, () => {
      const { file, text } = longSession();
      const session = SessionManager.open(file, { readOnly: true, bodies: mode });
      damageLine(file, text, "m10"); // long before the kept part
      const context = session.buildSessionContext();
      assert.deepEqual(
        context.messages.map((m) => m.role),
        ["compactionSummary", "user", "assistant", "user", "assistant", "user"],
      );
      // asking for everything reads the damaged line, and says where and what to do
      assert.throws(
        () => session.getEntries(),
        (error: Error) => error.message.includes(`${file}:12:`) && error.message.includes("open it again") && !error.message.includes("\n"),
      );
    });
  }

  it("keeps reading the file it opened when another writer replaces it atomically", () => {
    const { file } = longSession();
    const session = SessionManager.open(file, { readOnly: true, bodies: "checked" });
    const replacement = `${file}.new`;
    writeFileSync(replacement, toJsonl([HEADER, userEntry("other", null, "a different session", 1)]));
    renameSync(replacement, file);
    assert.equal(session.getEntries().length, 202);
    assert.equal(session.getEntry("m10")?.type, "message");
  });

  it("reads bodies again after close(), from the file on disk", () => {
    const { file } = longSession();
    const session = SessionManager.open(file, { readOnly: true });
    session.close();
    assert.equal(session.buildSessionContext().messages.length, 6);
    assert.equal(session.getEntries().length, 202);
  });

  it("trusted: a damaged body is reported when read, where parsed and checked skip it at open", () => {
    const good = userEntry("u1", null, "fine", 1);
    const lines = [JSON.stringify(HEADER), JSON.stringify(good), `{"type":"message","id":"u2","parentId":"u1","timestamp":"x","message":{"role":"user","content":[{"type":"text","text":"cut here}`];
    lines.push(JSON.stringify(userEntry("u3", "u1", "after", 3)));
    const file = join(DIR, "damaged.jsonl");
    writeFileSync(file, `${lines.join("\n")}\n`);

    for (const mode of ["parsed", "checked"] as const) {
      const checked = SessionManager.open(file, { readOnly: true, bodies: mode });
      assert.deepEqual(
        checked.getLoadIssues().map((i) => [i.kind, i.line]),
        [["malformed-json", 3]],
        mode,
      );
      assert.deepEqual(checked.getEntries().map((e) => e.id), ["u1", "u3"], mode);
    }

    const trusted = SessionManager.open(file, { readOnly: true, bodies: "trusted" });
    assert.deepEqual(trusted.getLoadIssues(), []);
    assert.equal(trusted.buildSessionContext().messages.length, 2, "the leaf's path does not touch the damaged line");
    assert.throws(() => trusted.getEntry("u2"), /damaged\.jsonl:3: cannot read entry u2 back: not JSON/);
  });
});

describe("checked: JSON checked at open, fields when read", () => {
  // well-formed JSON in the usual message shape, but the content is a number
  const wrongFields = `{"type":"message","id":"u2","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":5}}`;
  function sessionWithWrongFields(): string {
    const file = join(DIR, `wrong-fields-${++counter}.jsonl`);
    const lines = [JSON.stringify(HEADER), JSON.stringify(userEntry("u1", null, "fine", 1)), wrongFields, JSON.stringify(userEntry("u3", "u1", "after", 3))];
    writeFileSync(file, `${lines.join("\n")}\n`);
    return file;
  }

  it("parsed reports a message with wrong fields at open and skips it", () => {
    const session = SessionManager.open(sessionWithWrongFields(), { readOnly: true, bodies: "parsed" });
    assert.deepEqual(
      session.getLoadIssues().map((i) => [i.kind, i.line]),
      [["invalid-entry", 3]],
    );
    assert.deepEqual(session.getEntries().map((e) => e.id), ["u1", "u3"]);
  });

  it("checked opens it and builds contexts that do not touch it; the index names line and entry when it is read", () => {
    const file = sessionWithWrongFields();
    const session = SessionManager.open(file, { readOnly: true, bodies: "checked" });
    assert.deepEqual(session.getLoadIssues(), []);
    assert.equal(session.buildSessionContext().messages.length, 2, "the leaf u3 hangs off u1");
    const { index } = loadSessionIndex(file, "checked", new TreeIndex());
    try {
      assert.throws(
        () => index.get("u2"),
        (error: Error) =>
          error instanceof InvalidBodyError &&
          error.message.startsWith(`${file}:3: entry u2 is not a valid entry (`) &&
          error.message.includes("content") &&
          !error.message.includes("\n"),
      );
    } finally {
      index.close();
    }
  });

  it("checked, once it reads the bad body: reads the file again in full, skips and reports the line as parsed does", () => {
    const file = sessionWithWrongFields();
    const warnings: string[] = [];
    const session = SessionManager.open(file, { readOnly: true, bodies: "checked", onWarning: (w) => warnings.push(w) });
    const tree = session.getTree(); // reads every body
    assert.deepEqual(
      flattenTree(tree).map(({ node }) => node.entry.id),
      ["u1", "u3"],
    );
    assert.deepEqual(
      session.getLoadIssues().map((i) => [i.kind, i.line, i.skipped]),
      [["invalid-entry", 3, true]],
    );
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:3: invalid entry: field \`message.content\``));
    assert.equal(session.getEntry("u2"), undefined);
    assert.equal(session.getLeafId(), "u3");
    assert.deepEqual(session.buildSessionContext().messages.length, 2);
  });

  it("checked, when the bad line is the leaf: the leaf falls back to the file's own, and a rewrite keeps a backup", () => {
    const file = join(DIR, `wrong-leaf-${++counter}.jsonl`);
    const lines = [JSON.stringify(HEADER), JSON.stringify(userEntry("u1", null, "fine", 1)), wrongFields];
    writeFileSync(file, `${lines.join("\n")}\n`);
    const session = SessionManager.open(file, { bodies: "checked" });
    try {
      // the open reads the last line to find the leaf, which is the bad one
      assert.equal(session.getLeafId(), "u1");
      assert.deepEqual(session.getLoadIssues().map((i) => [i.kind, i.line]), [["invalid-entry", 3]]);
      session.rewriteFile();
      const backups = readdirSync(DIR).filter((name) => name.startsWith(`wrong-leaf-${counter}.jsonl.bak-`));
      assert.equal(backups.length, 1, "the skipped line survives in a backup");
      assert.equal(readFileSync(join(DIR, backups[0]), "utf8"), `${lines.join("\n")}\n`);
    } finally {
      session.close();
    }
  });
});

describe("readMessagePrefix", () => {
  const line = (value: unknown) => Buffer.from(JSON.stringify(value));
  const read = (bytes: Buffer, previousId?: string) => {
    const prefix = readMessagePrefix(bytes, 0, bytes.length, previousId);
    return prefix && { id: prefix.id, parentId: prefix.parentId, role: prefix.role };
  };
  it("reads ids and role off the usual shape", () => {
    assert.deepEqual(read(line(userEntry("a1", "p0", "hi"))), { id: "a1", parentId: "p0", role: "user" });
    assert.deepEqual(read(line(userEntry("a1", null, "hi"))), { id: "a1", parentId: null, role: "user" });
  });
  it("says where the rest of the line starts: right after the role", () => {
    const bytes = line(userEntry("a1", "p0", "hi"));
    const prefix = readMessagePrefix(bytes)!;
    assert.equal(bytes.toString("utf8", prefix.bodyAt - 14, prefix.bodyAt), '{"role":"user"');
    assert.equal(bytes.toString("utf8", prefix.bodyAt, prefix.bodyAt + 11), ',"content":');
  });
  it("hands back the previous id for a matching parent, and only for one spelled the same", () => {
    assert.deepEqual(read(line(userEntry("a2", "a1", "hi")), "a1"), { id: "a2", parentId: "a1", role: "user" });
    assert.deepEqual(read(line(userEntry("a2", "a1", "hi")), "a10"), { id: "a2", parentId: "a1", role: "user" });
    // "é" in UTF-8 is the bytes C3 A9, which are also the char codes of "Ã©"
    assert.deepEqual(read(line(userEntry("a2", "é", "hi")), "Ã©"), { id: "a2", parentId: "é", role: "user" });
  });
  it("gives up on any other shape, so the line is parsed in full", () => {
    const e = userEntry("a1", "p0", "hi") as unknown as Record<string, unknown>;
    assert.equal(readMessagePrefix(line({ id: e.id, type: e.type, parentId: e.parentId, timestamp: e.timestamp, message: e.message })), undefined);
    assert.equal(readMessagePrefix(line({ ...e, id: 'a"1' })), undefined, "escaped id");
    assert.equal(readMessagePrefix(line(entry("custom", "c1", null, { customType: "x" }))), undefined);
    assert.equal(readMessagePrefix(line(e).subarray(0, 60)), undefined, "torn line");
  });
});

describe("IdTable", () => {
  it("finds every id after growing, keeps the first holder unless told to replace", () => {
    const items: { id: string }[] = [];
    const table = new IdTable(items);
    for (let i = 0; i < 5000; i++) {
      const id = (i * 2654435761).toString(16);
      assert.equal(table.put(id, items.length, false), true);
      items.push({ id });
    }
    assert.equal(table.size, 5000);
    for (const item of items) assert.equal(table.get(item.id), item);
    assert.equal(table.has("not-there"), false);
    items.push({ id: items[10].id });
    assert.equal(table.put(items[10].id, items.length - 1, false), false);
    assert.equal(table.get(items[10].id), items[10]);
    assert.equal(table.put(items[10].id, items.length - 1, true), true);
    assert.equal(table.get(items[10].id), items[items.length - 1]);
    assert.equal(table.size, 5000);
  });

  it("keeps what it holds through a reservation, and finds ids added after it", () => {
    const items: { id: string }[] = [];
    const table = new IdTable(items);
    const add = (id: string) => {
      table.put(id, items.length, false);
      items.push({ id });
    };
    for (let i = 0; i < 100; i++) add(`a${i}`);
    table.reserve(10_000);
    for (let i = 0; i < 10_000; i++) add(`b${i}`);
    table.reserve(0);
    assert.equal(table.size, 10_100);
    for (const item of items) assert.equal(table.get(item.id), item);
    assert.equal(table.has("b10000"), false);
  });

  it("takes ids on trust only for the puts it was told of, and places them before the next lookup or put", () => {
    const items: { id: string }[] = [];
    const table = new IdTable(items, true);
    const add = (id: string) => {
      const added = table.put(id, items.length, false);
      if (added) items.push({ id });
      return added;
    };
    table.trustNext(3);
    for (const id of ["a", "b", "c"]) assert.equal(add(id), true);
    assert.equal(add("a"), false, "the fourth put is checked, against the trusted ones too");
    assert.equal(add("d"), true);
    assert.equal(table.size, 4);
    for (const item of items) assert.equal(table.get(item.id), item);
    table.trustNext(5);
    assert.equal(add("e"), true);
    assert.equal(table.get("e"), items[4], "a lookup ends the trust: the next put is checked against every id");
    assert.equal(add("e"), false);
    // a put that takes an id over after trust: the newest item holds it, as the caller appends it
    table.trustNext(2);
    assert.equal(add("f"), true);
    assert.equal(table.put("a", items.length, true), true);
    items.push({ id: "a" });
    assert.equal(table.get("a"), items[items.length - 1]);
    assert.equal(table.get("f"), items[5]);
    assert.equal(table.size, 6);
  });
});

describe("duplicate ids with deferred bodies", () => {
  for (const mode of ["eager", ...MODES] as const) {
    it(`${mode}: the later line is skipped and reported, the first one kept`, () => {
      const file = writeSession([userEntry("a", null, "first", 1), userEntry("b", "a", "second", 2), userEntry("a", "b", "again", 3)]);
      const session = SessionManager.open(file, { readOnly: true, bodies: mode });
      assert.deepEqual(
        session.getLoadIssues().map((i) => [i.kind, i.line]),
        [["duplicate-id", 4]],
      );
      assert.deepEqual(session.getEntries().map((e) => e.timestamp), [userEntry("a", null, "", 1).timestamp, userEntry("b", "a", "", 2).timestamp]);
      assert.equal(session.getLeafId(), "b");
    });
  }
});
