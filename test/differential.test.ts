/**
 * Differential tests against the reference implementation (`@mariozechner/pi-coding-agent`, the
 * dev-only oracle): random session trees built through bonsai are read by the reference, and
 * trees built through the reference are read by bonsai; both must see the same entries, tree,
 * labels and contexts. Randomness is seeded, so a failure names the seed that reproduces it.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { estimateTokens, getLastAssistantUsage } from "../src/compaction/tokens.js";
import { convertToLlm } from "../src/messages/convert.js";
import type { AgentMessage } from "../src/format/message-types.js";
import { buildSessionContext } from "../src/format/context.js";
import { parseSessionEntries } from "../src/storage/load.js";
import { SessionManager } from "../src/session/manager.js";
import { migrateSessionEntries } from "../src/format/migrate.js";
import { toJsonl } from "../src/storage/file-writer.js";
import { flattenTree } from "../src/session/tree.js";
import type { FileEntry, SessionContext, SessionEntry } from "../src/format/entry-types.js";
import { tempDir } from "./helpers/session-builders.js";
import { seededRandom } from "../src/util/seeded-random.js";

// ------------------------------------------------------------------ the reference, loosely typed

interface RefNode {
  entry: SessionEntry;
  children: RefNode[];
  label?: string;
}

/** The part of the reference SessionManager these tests drive; its own types are pi-ai's. */
interface StoreApi {
  appendMessage(message: unknown): string;
  appendThinkingLevelChange(level: string): string;
  appendModelChange(provider: string, modelId: string): string;
  appendCompaction(summary: string, firstKeptEntryId: string, tokensBefore: number, details?: unknown, fromExtension?: boolean): string;
  appendCustomEntry(customType: string, data?: unknown): string;
  appendCustomMessageEntry(customType: string, content: unknown, display: boolean, details?: unknown): string;
  appendLabelChange(targetId: string, label?: string): string;
  appendSessionInfo(name: string): string;
  branch(id: string): void;
  resetLeaf(): void;
  branchWithSummary(fromId: string | null, summary: string, details?: unknown, fromExtension?: boolean): string;
  getBranch(fromId?: string): SessionEntry[];
  getLeafId(): string | null;
  getEntries(): readonly SessionEntry[];
}

interface RefManager extends StoreApi {
  getTree(): RefNode[];
  getLabel(id: string): string | undefined;
  getChildren(id: string): SessionEntry[];
  getHeader(): unknown;
  getSessionName(): string | undefined;
  getSessionFile(): string | undefined;
  buildSessionContext(): SessionContext;
}

interface Reference {
  SessionManager: {
    open(path: string): RefManager;
    create(cwd: string, dir: string): RefManager;
  };
  buildSessionContext(entries: readonly SessionEntry[], leafId?: string | null): SessionContext;
  migrateSessionEntries(entries: FileEntry[]): void;
  parseSessionEntries(text: string): FileEntry[];
  convertToLlm(messages: readonly AgentMessage[]): unknown[];
  estimateTokens(message: AgentMessage): number;
  getLastAssistantUsage(entries: readonly SessionEntry[]): unknown;
}

let ref: Reference;
const { dir: DIR, cleanup } = tempDir();
before(async () => {
  ref = (await import("@mariozechner/pi-coding-agent")) as unknown as Reference;
});
after(cleanup);

// ------------------------------------------------------------------ seeded randomness

class Rand {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = seededRandom(seed);
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }
}

const WORDS = ["read", "the", "file", "fix", "bug", "tests", "pass", "π", "日本", "naïve", "\n", "  ", "`code`", '"quoted"', "emoji 🌳"];
const text = (r: Rand, max = 30) => Array.from({ length: 1 + r.int(max) }, () => r.pick(WORDS)).join(" ");
const image = (r: Rand) => ({ type: "image" as const, data: Buffer.from(text(r, 5)).toString("base64"), mimeType: "image/png" });
const PROVIDERS = [
  ["anthropic", "claude-sonnet-4-5"],
  ["openai", "gpt-5"],
  ["google", "gemini-2.5-pro"],
] as const;

function randomMessage(r: Rand, time: number): AgentMessage {
  switch (r.int(6)) {
    case 0:
      return {
        role: "user",
        content: r.chance(0.5) ? text(r) : [{ type: "text", text: text(r) }, ...(r.chance(0.3) ? [image(r)] : [])],
        timestamp: time,
      };
    case 1:
    case 2: {
      const [provider, model] = r.pick(PROVIDERS);
      const content: Extract<AgentMessage, { role: "assistant" }>["content"] = [];
      if (r.chance(0.4)) content.push({ type: "thinking", thinking: text(r) });
      content.push({ type: "text", text: text(r) });
      if (r.chance(0.4)) content.push({ type: "toolCall", id: `call_${r.int(1e6)}`, name: r.pick(["read", "bash", "edit"]), arguments: { path: text(r, 3) } });
      const input = r.int(50_000);
      return {
        role: "assistant",
        content,
        api: "anthropic-messages",
        provider,
        model,
        usage: { input, output: r.int(2000), cacheRead: r.int(1000), cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
        stopReason: r.pick(["stop", "toolUse", "length", "aborted", "error"] as const),
        timestamp: time,
      };
    }
    case 3:
      return {
        role: "toolResult",
        toolCallId: `call_${r.int(1e6)}`,
        toolName: "read",
        content: [{ type: "text", text: text(r, 60) }, ...(r.chance(0.3) ? [image(r), image(r)] : [])],
        isError: r.chance(0.2),
        timestamp: time,
      };
    case 4:
      return {
        role: "bashExecution",
        command: text(r, 4),
        output: r.chance(0.2) ? "" : text(r, 40),
        exitCode: r.pick([0, 1, 2, null]),
        cancelled: r.chance(0.1),
        truncated: false,
        timestamp: time,
        ...(r.chance(0.2) ? { excludeFromContext: true } : {}),
      };
    default:
      return { role: "user", content: text(r, 5), timestamp: time };
  }
}

const fileLists = (r: Rand) => ({ readFiles: [text(r, 2)], modifiedFiles: r.chance(0.5) ? [text(r, 2)] : [] });
const maybeFlag = (r: Rand) => r.pick([undefined, true, false]);

/** Random appends and moves on any store with the common API. */
function growTree(store: StoreApi, r: Rand, steps: number): void {
  let time = 1_700_000_000_000;
  const ids = () => store.getEntries().map((e) => e.id);
  for (let i = 0; i < steps; i++) {
    time += 1000;
    const existing = ids();
    const roll = r.int(100);
    if (existing.length === 0 || roll < 40) store.appendMessage(randomMessage(r, time));
    else if (roll < 48) {
      const branch = existing[r.int(existing.length)];
      store.branch(branch);
    } else if (roll < 54) {
      const from = r.chance(0.1) ? null : existing[r.int(existing.length)];
      store.branchWithSummary(from, r.chance(0.1) ? "" : text(r), r.chance(0.5) ? fileLists(r) : undefined, maybeFlag(r));
    } else if (roll < 60) {
      const path = store.getBranch();
      const firstKept = path.length > 0 && r.chance(0.9) ? path[r.int(path.length)].id : "not-on-path";
      store.appendCompaction(text(r), firstKept, r.int(100_000), r.chance(0.5) ? fileLists(r) : undefined, maybeFlag(r));
    } else if (roll < 67) {
      const target = existing[r.int(existing.length)];
      store.appendLabelChange(target, r.chance(0.25) ? undefined : r.pick(["start", "good", "bad", "retry"]));
    } else if (roll < 72) store.appendThinkingLevelChange(r.pick(["off", "low", "medium", "high"]));
    else if (roll < 77) {
      const [provider, modelId] = r.pick(PROVIDERS);
      store.appendModelChange(provider, modelId);
    }
    else if (roll < 80) store.appendSessionInfo(text(r, 3));
    else if (roll < 86) store.appendCustomEntry(r.pick(["ext.state", "todo"]), r.chance(0.7) ? { n: r.int(100), s: text(r, 3) } : undefined);
    else if (roll < 94) {
      const content = r.chance(0.5) ? text(r) : [{ type: "text", text: text(r) }, ...(r.chance(0.4) ? [image(r)] : [])];
      store.appendCustomMessageEntry(r.pick(["note", "reminder"]), content, r.chance(0.5), r.chance(0.3) ? { k: r.int(9) } : undefined);
    } else if (roll < 96) store.resetLeaf();
    else store.appendMessage(randomMessage(r, time));
  }
}

// ------------------------------------------------------------------ comparisons

/** JSON as written: `undefined` fields vanish, as they do in the file. */
const asWritten = <T>(value: T): T => JSON.parse(JSON.stringify(value));

const treeRows = (roots: readonly RefNode[]) =>
  flattenTree(roots as never).map(({ node }) => {
    const n = node as unknown as RefNode;
    return { id: n.entry.id, parentId: n.entry.parentId, children: n.children.map((c) => c.entry.id), label: n.label ?? null };
  });

/** Messages whose conversion both implementations define the same way (summaries use our own templates). */
const sharedConversion = (m: AgentMessage) =>
  m.role === "user" || m.role === "assistant" || m.role === "toolResult" || m.role === "custom" || m.role === "bashExecution";

function assertSameContexts(entries: readonly SessionEntry[], label: string): void {
  const leaves: (string | null | undefined)[] = [null, undefined, "no-such-id", ...entries.map((e) => e.id)];
  for (const leafId of leaves) {
    const ours = buildSessionContext(entries, leafId);
    const theirs = ref.buildSessionContext(entries, leafId);
    assert.deepEqual(ours, theirs, `${label}: context at ${leafId}`);
    const shared = ours.messages.filter(sharedConversion);
    assert.deepEqual(convertToLlm(shared), ref.convertToLlm(shared), `${label}: convertToLlm at ${leafId}`);
    assert.deepEqual(ours.messages.map(estimateTokens), ours.messages.map(ref.estimateTokens), `${label}: estimates at ${leafId}`);
  }
}

function assertSameView(ours: SessionManager, theirs: RefManager, label: string): void {
  const entries = ours.getEntries();
  assert.deepEqual(asWritten(theirs.getEntries()), entries, `${label}: entries`);
  assert.deepEqual(treeRows(theirs.getTree()), treeRows(ours.getTree() as unknown as RefNode[]), `${label}: tree`);
  for (const e of entries) {
    assert.equal(ours.getLabel(e.id), theirs.getLabel(e.id), `${label}: label of ${e.id}`);
    assert.deepEqual(ours.getChildren(e.id).map((c) => c.id), theirs.getChildren(e.id).map((c) => c.id), `${label}: children of ${e.id}`);
    assert.deepEqual(ours.getBranch(e.id).map((b) => b.id), theirs.getBranch(e.id).map((b) => b.id), `${label}: branch of ${e.id}`);
  }
  assert.equal(ours.getSessionName(), theirs.getSessionName(), `${label}: session name`);
  assert.deepEqual(getLastAssistantUsage(entries), ref.getLastAssistantUsage(entries as SessionEntry[]), `${label}: last usage`);
  assertSameContexts(entries, label);
}

// ------------------------------------------------------------------ bonsai writes, the reference reads

const SEEDS = Array.from({ length: 30 }, (_, i) => i + 1);

/** What the random trees held, so a generator that stopped producing some shape is noticed. */
const seen = new Map<string, number>();
const count = (what: string) => seen.set(what, (seen.get(what) ?? 0) + 1);

describe("files bonsai writes are read the same by the reference", () => {
  for (const seed of SEEDS) {
    it(`random tree, seed ${seed}`, () => {
      const r = new Rand(seed);
      const ours = SessionManager.create("/work/project", join(DIR, `bonsai-${seed}`));
      growTree(ours as unknown as StoreApi, r, 20 + r.int(60));
      const entriesBefore = structuredClone(ours.getEntries());
      const leafBefore = ours.getLeafId();
      const contextBefore = ours.buildSessionContext();
      const file = ours.getSessionFile()!;
      ours.close();

      const reopened = SessionManager.open(file, { readOnly: true });
      assert.deepEqual(reopened.getLoadIssues(), []);
      assert.equal(reopened.getLeafId(), leafBefore, "bonsai keeps its leaf across the reopen");
      assert.deepEqual(reopened.buildSessionContext(), contextBefore);
      const written = reopened.getEntries();
      // everything appended is in the file, plus at most one leaf marker written by close()
      assert.deepEqual(written.slice(0, entriesBefore.length), entriesBefore);
      assert.ok(written.length - entriesBefore.length <= 1);

      for (const e of written) count(e.type === "message" ? `message:${e.message.role}` : e.type);
      if (written.length > entriesBefore.length) count("leaf marker");
      if (reopened.getTree().length > 1) count("several roots");
      if (written.some((e) => e.type === "branch_summary" && e.parentId === null)) count("summary as root");

      const theirs = ref.SessionManager.open(file);
      assert.deepEqual(asWritten(theirs.getHeader()), reopened.getHeader());
      assertSameView(reopened, theirs, `seed ${seed}`);
      // the reference takes the last line as its leaf; what it would send must be what bonsai sends
      assert.deepEqual(theirs.buildSessionContext(), contextBefore, `seed ${seed}: context at the reference's leaf`);
    });
  }
});

describe("the random trees cover every shape", () => {
  it("held every entry type, message role, leaf markers and several roots", () => {
    const wanted = [
      "message:user",
      "message:assistant",
      "message:toolResult",
      "message:bashExecution",
      "thinking_level_change",
      "model_change",
      "compaction",
      "branch_summary",
      "custom",
      "custom_message",
      "label",
      "session_info",
      "leaf marker",
      "several roots",
      "summary as root",
    ];
    assert.deepEqual(wanted.filter((w) => !seen.get(w)), []);
  });
});

// ------------------------------------------------------------------ the reference writes, bonsai reads

describe("files the reference writes are read the same by bonsai", () => {
  for (const seed of SEEDS.slice(0, 15)) {
    it(`random tree, seed ${seed}`, () => {
      const r = new Rand(1000 + seed);
      const theirs = ref.SessionManager.create("/work/project", join(DIR, `ref-${seed}`));
      growTree(theirs, r, 20 + r.int(60));
      // the reference writes nothing until an assistant message exists
      theirs.appendMessage(assistantReply());
      const file = theirs.getSessionFile()!;
      const bytes = readFileSync(file);
      const warnings: string[] = [];
      const ours = SessionManager.open(file, { onWarning: (w) => warnings.push(w) });
      try {
        assert.deepEqual(warnings, []);
        assert.deepEqual(ours.getEntries(), asWritten(theirs.getEntries()));
        assert.equal(ours.getLeafId(), theirs.getLeafId(), "leaf: the last entry written");
        assertSameView(ours, ref.SessionManager.open(file), `seed ${seed}`);
      } finally {
        ours.close();
      }
      // opening and closing without changes writes nothing
      assert.deepEqual(readFileSync(file), bytes);
    });
  }
});

function assistantReply(): AgentMessage {
  return {
    role: "assistant",
    content: [{ type: "text", text: "done" }],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "stop",
    timestamp: 1,
  };
}

// ------------------------------------------------------------------ damaged files and pure functions

describe("damaged trees and pure functions agree with the reference", () => {
  it("entries with missing parents: same tree and contexts", () => {
    for (const seed of SEEDS.slice(0, 10)) {
      const r = new Rand(2000 + seed);
      const ours = SessionManager.inMemory("/w");
      growTree(ours as unknown as StoreApi, r, 40);
      // drop about one entry in eight: their children become orphans
      const kept = ours.getEntries().filter(() => !r.chance(0.125));
      const file = join(DIR, `damaged-${seed}.jsonl`);
      writeFileSync(file, toJsonl([ours.getHeader(), ...kept]));
      const reopened = SessionManager.open(file, { readOnly: true });
      const theirs = ref.SessionManager.open(file);
      assert.deepEqual(treeRows(theirs.getTree()), treeRows(reopened.getTree() as unknown as RefNode[]), `seed ${seed}: tree`);
      assertSameContexts(reopened.getEntries(), `damaged seed ${seed}`);
    }
  });

  it("v1 migration gives the same chain as the reference (ids aside), plus the model spelling", () => {
    for (const seed of SEEDS.slice(0, 10)) {
      const r = new Rand(3000 + seed);
      const v1: Record<string, unknown>[] = [{ type: "session", id: `s${seed}`, timestamp: "2025-01-01T00:00:00.000Z", cwd: "/w" }];
      for (let i = 0; i < 30; i++) {
        const roll = r.int(10);
        const timestamp = new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString();
        if (roll < 6) v1.push({ type: "message", timestamp, message: randomMessage(r, i) });
        else if (roll < 7) v1.push({ type: "model_change", timestamp, provider: "openai", modelId: "gpt-4o" });
        else if (roll < 8) v1.push({ type: "thinking_level_change", timestamp, thinkingLevel: "high" });
        else if (roll < 9) v1.push({ type: "message", timestamp, message: { role: "hookMessage", customType: "h", content: text(r), display: true, timestamp: i } });
        else v1.push({ type: "compaction", timestamp, summary: text(r), firstKeptEntryIndex: 1 + r.int(v1.length), tokensBefore: 5 });
      }
      const ours = structuredClone(v1) as unknown as FileEntry[];
      const theirs = structuredClone(v1) as unknown as FileEntry[];
      migrateSessionEntries(ours);
      ref.migrateSessionEntries(theirs);
      // replace ids by positions so both sides can be compared
      const byPosition = (list: FileEntry[]) => {
        const position = new Map(list.map((e, i) => [e.id, `#${i}`]));
        return list.map((e) => {
          const copy = { ...(e as unknown as Record<string, unknown>) };
          if (copy.type !== "session") copy.id = position.get(copy.id as string);
          if (typeof copy.parentId === "string") copy.parentId = position.get(copy.parentId);
          if (typeof copy.firstKeptEntryId === "string") copy.firstKeptEntryId = position.get(copy.firstKeptEntryId);
          if (copy.type === "model_change") delete copy.model;
          return copy;
        });
      };
      assert.deepEqual(byPosition(ours), byPosition(theirs), `seed ${seed}`);
      for (const e of ours) if (e.type === "model_change") assert.equal((e as { model?: string }).model, "openai/gpt-4o");
      // and both build the same context from the migrated entries
      const entries = ours.slice(1) as SessionEntry[];
      assert.deepEqual(buildSessionContext(entries), ref.buildSessionContext(entries), `seed ${seed}: context`);
    }
  });

  it("parseSessionEntries reads the same lines as the reference", () => {
    const r = new Rand(4242);
    const lines: string[] = [];
    for (let i = 0; i < 200; i++) {
      const roll = r.int(10);
      if (roll < 7) lines.push(JSON.stringify({ type: "message", i, text: text(r) }));
      else if (roll < 8) lines.push("");
      else if (roll < 9) lines.push(`{"broken": ${i}`);
      else lines.push("   ");
    }
    const content = `${lines.join("\n")}\n`;
    assert.deepEqual(parseSessionEntries(content), ref.parseSessionEntries(content));
  });
});
