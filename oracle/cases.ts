/**
 * Sessions for the oracle suite, written as each agent writes them, covering every entry type of
 * each dialect: branches and several roots, compactions chained and retaining none, labels and
 * bookkeeping entries as the last line (the leaf pi and omp infer), a torn last line; pi from
 * 0.87's context edits and system messages and checkpoints; oh-my-pi's title slot, reset
 * boundaries, failed and retried turns and unanswered tool calls. Each case is asked at its
 * default leaf, at no leaf, and at every entry. A compaction of each dialect carries a native
 * lane's payload, which every agent must read past to the readable summary.
 */
import type { DialectName } from "../src/format/dialects/index.js";
import { TITLE_SLOT_BYTES } from "../src/format/title-slot.js";

export interface OracleCase {
  name: string;
  dialect: DialectName;
  lines: string[];
  /** a last line cut short, as a torn write leaves it */
  tornTail?: string;
}

const T0 = Date.parse("2026-11-01T10:00:00.000Z");
const iso = (s: number) => new Date(T0 + s * 1000).toISOString();
const USAGE = { input: 1200, output: 80, cacheRead: 0, cacheWrite: 0, totalTokens: 1280, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

let clock = 0;
const e = (type: string, id: string, parentId: string | null, fields: Record<string, unknown> = {}) =>
  JSON.stringify({ type, id, parentId, timestamp: iso(++clock), ...fields });
const message = (id: string, parentId: string | null, m: Record<string, unknown>) => e("message", id, parentId, { message: { ...m, timestamp: T0 + clock * 1000 } });
const user = (id: string, parentId: string | null, content: unknown) => message(id, parentId, { role: "user", content });
type Block = Record<string, unknown>;
const assistant = (id: string, parentId: string | null, content: Block[] | string, extra: Record<string, unknown> = {}) =>
  message(id, parentId, {
    role: "assistant",
    content: typeof content === "string" ? [{ type: "text", text: content }] : content,
    api: "anthropic-messages",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    usage: USAGE,
    stopReason: Array.isArray(content) && content.some((b) => b.type === "toolCall") ? "toolUse" : "stop",
    ...extra,
  });
const call = (id: string, path: string, name = "read"): Block => ({ type: "toolCall", id, name, arguments: { path } });
const result = (id: string, parentId: string | null, callId: string, text: string, isError = false, toolName = "read") =>
  message(id, parentId, { role: "toolResult", toolCallId: callId, toolName, content: [{ type: "text", text }], isError });
const header = (id: string) => JSON.stringify({ type: "session", version: 3, id, timestamp: iso(0), cwd: "/work/shop" });
const compaction = (id: string, parentId: string, firstKeptEntryId: string, summary: string, extra: Record<string, unknown> = {}) =>
  e("compaction", id, parentId, { summary, firstKeptEntryId, tokensBefore: 5000, details: { readFiles: ["src/a.ts"], modifiedFiles: [] }, ...extra });

/** What a native compaction lane stores (src/summarizer/native-lane.ts): the provider's opaque payload and its figures. */
const NATIVE = {
  details: {
    readFiles: [],
    modifiedFiles: [],
    method: "native",
    native: { lane: "anthropic", route: "messages context_management compact_20260112", provider: "anthropic", model: "claude-sonnet-4-5", usage: { input: 2000, output: 900, cacheRead: 60000, cacheWrite: 0 }, cacheReadShare: 0.968, tokensShed: 4100, tokensWritten: 900, netTokens: 3200 },
  },
  preserveData: {
    native: {
      lane: "anthropic",
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      api: "anthropic-messages",
      route: "messages context_management compact_20260112",
      data: { type: "compaction", content: "Project set up, login form added and styled." },
    },
  },
};

/** oh-my-pi's title slot: its JSON padded with spaces to 256 bytes with the newline. */
function titleSlot(title: string): string {
  const fields = { type: "title", v: 1, title, source: "user", updatedAt: iso(1) };
  const bare = JSON.stringify({ ...fields, pad: "" });
  return JSON.stringify({ ...fields, pad: " ".repeat(TITLE_SLOT_BYTES - 1 - Buffer.byteLength(bare)) });
}

function piCases(): OracleCase[] {
  return [
    {
      name: "pi-linear",
      dialect: "pi",
      lines: [
        header("c-linear"),
        e("model_change", "m1", null, { provider: "openai", modelId: "gpt-5" }),
        e("thinking_level_change", "k1", "m1", { thinkingLevel: "high" }),
        user("u1", "k1", "Read src/a.ts and tell me what it exports"),
        assistant("a1", "u1", [{ type: "text", text: "Reading it." }, call("c1", "src/a.ts")]),
        result("r1", "a1", "c1", "export const a = 1;"),
        assistant("a2", "r1", "It exports `a`."),
        e("custom_message", "cm1", "a2", { customType: "note", content: "remember the tests", display: true }),
        e("custom", "x1", "cm1", { customType: "ext-state", data: { n: 1 } }),
        user("u2", "x1", [{ type: "text", text: "Now run the tests" }]),
        assistant("a3", "u2", "The tool failed.", { stopReason: "error", errorMessage: "boom" }),
        e("session_info", "n1", "a3", { name: "Exports" }),
        e("label", "l1", "n1", { targetId: "u1", label: "start" }),
      ],
    },
    {
      name: "pi-branches-and-roots",
      dialect: "pi",
      lines: [
        header("c-branches"),
        user("u1", null, "First question"),
        assistant("a1", "u1", "First answer"),
        user("u2", "a1", "A path I will leave"),
        assistant("a2", "u2", "An answer on the left branch"),
        e("branch_summary", "b1", "a1", { fromId: "a1", summary: "Tried the left branch: it did not work." }),
        user("u3", "b1", "Second try"),
        e("branch_summary", "b2", null, { fromId: "root", summary: "Started over from nothing." }),
        user("u4", "b2", "A new root"),
        e("branch_summary", "b3", "u4", { fromId: "u4", summary: "" }),
        user("u5", null, "Another root, no summary"),
        assistant("a5", "u5", "Answer on the third root"),
        e("label", "l1", "u3", { targetId: "u3", label: "retry" }),
      ],
      tornTail: `{"type":"message","id":"t1","parentId":"a5","timestamp":"${iso(99)}","message":{"role":"user","con`,
    },
    {
      name: "pi-compactions",
      dialect: "pi",
      lines: [
        header("c-compactions"),
        user("u1", null, "Set up the project"),
        assistant("a1", "u1", "Done"),
        user("u2", "a1", "Add a login form"),
        assistant("a2", "u2", "Added"),
        compaction("c1", "a2", "u2", "The project is set up; a login form was asked for."),
        user("u3", "c1", "Style it"),
        assistant("a3", "u3", "Styled"),
        // made by a native lane: the agents read the readable summary beside the provider's payload
        compaction("c2", "a3", "u3", "Project set up, login form added and styled.", NATIVE),
        user("u4", "c2", "Now the logout"),
        assistant("a4", "u4", "Logout added"),
        compaction("c3", "a4", "c3", "Everything so far, nothing kept."),
        user("u5", "c3", "And tests"),
        compaction("c4", "u5", "missing-id", "A compaction whose kept entry is nowhere."),
        user("u6", "c4", "Last"),
      ],
    },
  ];
}

function pi1Cases(): OracleCase[] {
  const system = (id: string, parentId: string | null, m: Record<string, unknown>) => message(id, parentId, { role: "system", ...m });
  return [
    {
      name: "pi1-context-edits",
      dialect: "pi-1",
      lines: [
        header("c-edits"),
        system("s1", null, { content: "You are a coding agent.", sections: { tools: "read, bash" }, toolsAdded: [{ name: "read", description: "read a file", parameters: {} }] }),
        user("u1", "s1", "Fix the parser"),
        assistant("a1", "u1", [{ type: "text", text: "Looking." }, call("c1", "src/parse.ts")]),
        result("r1", "a1", "c1", "x".repeat(300)),
        e("custom_message", "cm1", "r1", { customType: "note", content: "a note", display: false }),
        assistant("a2", "cm1", "The first attempt, which failed", { stopReason: "error", errorMessage: "overloaded" }),
        e("context_edit", "e1", "a2", { targetId: "a2", replacement: null }),
        e("context_edit", "e2", "e1", { targetId: "r1", replacement: { content: [{ type: "text", text: "[output pruned]" }] } }),
        e("context_edit", "e3", "e2", { targetId: "u1", replacement: { content: "Fix the parser (edited)" } }),
        e("context_edit", "e4", "e3", { targetId: "u1", replacement: { content: [{ type: "text", text: "Fix the parser, second edit" }] } }),
        e("context_edit", "e5", "e4", { targetId: "cm1", replacement: { content: "the note, replaced" } }),
        e("context_edit", "e6", "e5", { targetId: "a1", replacement: { content: [{ type: "text", text: "Looked." }, call("c1", "src/parse.ts")] } }),
        e("branch_summary", "b1", "e6", { fromId: "e6", summary: "a side trip" }),
        e("context_edit", "e7", "b1", { targetId: "b1", replacement: { content: "ignored" } }),
        e("context_edit", "e8", "e7", { targetId: "s1", replacement: { content: "ignored too" } }),
        e("context_edit", "e9", "e8", { targetId: "nowhere", replacement: null }),
        e("usage", "g1", "e9", { kind: "cache_warm", provider: "anthropic", model: "claude-sonnet-4-5", usage: USAGE }),
        user("u2", "g1", "Go on"),
        assistant("a3", "u2", [call("c3", "src/lexer.ts", "bash")]),
        result("r3", "a3", "c3", `export function lex() {} ${"// tokens ".repeat(400)}`, false, "bash"),
        assistant("a4", "r3", [call("c4", "npm test", "bash")]),
        result("r4", "a4", "c4", "12 passing", false, "bash"),
        user("side", "u1", "a sibling branch"),
        e("context_edit", "e10", "r4", { targetId: "side", replacement: null }),
      ],
    },
    {
      name: "pi1-system-checkpoints",
      dialect: "pi-1",
      lines: [
        header("c-system"),
        system("s1", null, { content: "base prompt", sections: { a: "A1", b: "B1" } }),
        user("u1", "s1", "First"),
        assistant("a1", "u1", "One"),
        system("s2", "a1", { content: null, sections: { b: "B2", c: "C2" }, toolsRemoved: [{ name: "bash" }] }),
        user("u2", "s2", "Second"),
        assistant("a2", "u2", "Two"),
        compaction("c1", "a2", "s2", "First and second.", {
          systemMessage: { role: "system", content: "base prompt", sections: { a: "A1", b: "B2", c: "C2" }, timestamp: T0 + 50_000 },
          usage: USAGE,
          fromHook: false,
        }),
        e("context_edit", "e1", "c1", { targetId: "u1", replacement: null }),
        user("u3", "e1", "Third"),
        system("s3", "u3", { content: "extra instructions", sections: { a: null } }),
        assistant("a3", "s3", "Three"),
        e("context_edit", "e2", "a3", { targetId: "u2", replacement: { content: "Second, edited in the kept range" } }),
        compaction("c2", "e2", "c2", "Retain none: everything summarized."),
        user("u4", "c2", "Fourth"),
        compaction("c3", "u4", "u4", "A compaction that an edit removes", {
          systemMessage: { role: "system", content: "snapshot", timestamp: T0 },
        }),
        e("context_edit", "e3", "c3", { targetId: "c3", replacement: null }),
        user("u5", "e3", "Fifth"),
      ],
    },
  ];
}

function ompCases(): OracleCase[] {
  const model = (id: string, parentId: string | null, m: string, role?: string) => e("model_change", id, parentId, { model: m, ...(role ? { role } : {}) });
  return [
    {
      name: "omp-title-and-models",
      dialect: "omp",
      lines: [
        titleSlot("Fix the flaky login test"),
        header("c-omp-title"),
        model("m1", null, "anthropic/claude-sonnet-4-5"),
        model("m2", "m1", "openai/gpt-5-mini", "smol"),
        e("thinking_level_change", "k1", "m2", { thinkingLevel: null }),
        user("u1", "k1", "Run the login test"),
        assistant("a1", "u1", [{ type: "thinking", thinking: "plan", thinkingSignature: "sig" }, call("c1", "test/login.test.ts")]),
        result("r1", "a1", "c1", "1 failing"),
        assistant("a2", "r1", [{ type: "text", text: "One more read." }, call("c2", "src/login.ts")], { provider: "openai", model: "gpt-5" }),
        e("title_change", "t1", "a2", { title: "Fix the flaky login test", source: "user" }),
      ],
    },
    {
      name: "omp-reset-boundaries",
      dialect: "omp",
      lines: [
        titleSlot(""),
        header("c-omp-reset"),
        user("u1", null, "Old task: port the CLI"),
        assistant("a1", "u1", "Ported"),
        e("reset_boundary", "z1", "a1"),
        user("u2", "z1", "New task after /clear"),
        assistant("a2", "u2", "On it"),
        compaction("c1", "a2", "u2", "The new task was started.", { shortSummary: "started", tokensAfter: 300, method: "soft", fromExtension: false, preserveData: NATIVE.preserveData }),
        user("u3", "c1", "Continue"),
        assistant("a3", "u3", "Continued"),
        e("reset_boundary", "z2", "a3"),
        user("u4", "z2", "Third task"),
        assistant("a4", "u4", "Third done"),
        compaction("c2", "a4", "u1", "A compaction keeping from before the first /clear."),
        user("u5", "c2", "After"),
      ],
    },
    {
      name: "omp-after-clear",
      dialect: "omp",
      lines: [
        titleSlot("After a clear"),
        header("c-omp-clear"),
        model("m1", null, "anthropic/claude-sonnet-4-5"),
        user("u1", "m1", "CLEARED-TASK: migrate the billing service to Rust"),
        assistant("a1", "u1", [{ type: "text", text: "CLEARED-REPLY: reading the billing code" }, call("c1", "billing/main.go")]),
        result("r1", "a1", "c1", `CLEARED-OUTPUT ${"package billing ".repeat(200)}`),
        assistant("a2", "r1", "CLEARED-REPLY: the service has 4 handlers"),
        e("reset_boundary", "z1", "a2"),
        user("u2", "z1", "New task: write the release notes for 2.4"),
        assistant("a3", "u2", [{ type: "text", text: "Reading the changelog" }, call("c2", "CHANGELOG.md")]),
        result("r2", "a3", "c2", `## 2.4 ${"fixed a bug ".repeat(200)}`),
        assistant("a4", "r2", "Drafted the notes."),
        user("u3", "a4", "Add the upgrade steps"),
        assistant("a5", "u3", [{ type: "text", text: "Reading the upgrade guide" }, call("c3", "UPGRADE.md")]),
        result("r3", "a5", "c3", `steps ${"run the migration ".repeat(200)}`),
        assistant("a6", "r3", "Added the upgrade steps."),
      ],
    },
    {
      name: "omp-summary",
      dialect: "omp",
      lines: [
        titleSlot("Rate limiting"),
        header("c-omp-summary"),
        model("m1", null, "anthropic/claude-sonnet-4-5"),
        user("u1", "m1", "Add rate limiting to the login endpoint: at most 5 attempts per minute per IP."),
        assistant("a1", "u1", [{ type: "text", text: "I'll read the handler first." }, call("c1", "src/login.ts")]),
        result("r1", "a1", "c1", "export async function login(req) {\n  return checkPassword(req.body);\n}"),
        assistant("a2", "r1", [{ type: "toolCall", id: "c2", name: "edit", arguments: { path: "src/login.ts", oldText: "return checkPassword", newText: "limiter.hit(req.ip);\n  return checkPassword" } }]),
        result("r2", "a2", "c2", "Edited src/login.ts", false, "edit"),
        assistant("a3", "r2", [{ type: "toolCall", id: "c3", name: "bash", arguments: { command: "npm test" } }]),
        result("r3", "a3", "c3", "FAIL test/login.test.ts: expected status 429, got 200", true, "bash"),
        assistant("a4", "r3", [
          { type: "text", text: "The limiter never resets. We chose a sliding window because a fixed window lets bursts through at its edges." },
          { type: "toolCall", id: "c4", name: "write", arguments: { path: "src/limiter.ts", content: "export const limiter = slidingWindow(5, 60_000);" } },
        ]),
        result("r4", "a4", "c4", "Wrote src/limiter.ts", false, "write"),
        assistant("a5", "r4", [{ type: "toolCall", id: "c5", name: "bash", arguments: { command: "npm test" } }]),
        result("r5", "a5", "c5", "12 passing", false, "bash"),
        assistant("a6", "r5", [{ type: "toolCall", id: "c6", name: "bash", arguments: { command: "npm run lint" } }]),
        result("r6", "a6", "c6", "Error: 1 problem (no-explicit-any) in src/limiter.ts", true, "bash"),
        assistant("a7", "r6", "Rate limiting is in place and the tests pass; the lint error in src/limiter.ts remains. Next: document the limiter in the README."),
        user("u2", "a7", "Also log every blocked attempt with the IP."),
      ],
    },
    {
      name: "omp-failed-turns",
      dialect: "omp",
      lines: [
        titleSlot("Errors"),
        header("c-omp-errors"),
        user("q1", null, "Question one"),
        assistant("x1", "q1", [], { stopReason: "error", errorMessage: "413" }),
        assistant("x2", "x1", "partial text then an error", { stopReason: "error", errorMessage: "reset" }),
        assistant("x3", "x2", [call("c9", "a.ts")], { stopReason: "aborted" }),
        result("r9", "x3", "c9", "aborted", true),
        assistant("x4", "r9", "a retried turn", { retryRecovery: { attempt: 1 } }),
        assistant("ok", "x4", "ok after retry"),
        user("q2", "ok", "Question two"),
        assistant("x5", "q2", "interrupted while thinking", { stopReason: "aborted" }),
        e("custom_message", "it", "x5", { customType: "interrupted-thinking", content: "the turn was interrupted", display: false }),
        e("custom_message", "pw", "it", { customType: "prewalk-plan", content: "a plan omp keeps out", display: false }),
        user("q3", "pw", "Question three"),
        assistant("a9", "q3", [{ type: "text", text: "Reading" }, call("c10", "b.ts"), call("c11", "c.ts")]),
        result("r10", "a9", "c10", "b"),
        e("model_usage", "mu", "q1", { model: "anthropic/claude-sonnet-4-5", usage: USAGE }),
      ],
    },
  ];
}

export function oracleCases(): OracleCase[] {
  clock = 0;
  return [...piCases(), ...pi1Cases(), ...ompCases()];
}

/** The ids of a case's entries, in file order: each is asked as a leaf. */
export function entryIds(c: OracleCase): string[] {
  return c.lines.flatMap((line) => {
    const value = JSON.parse(line) as { type?: string; id?: string };
    return value.type === "session" || value.type === "title" || !value.id ? [] : [value.id];
  });
}
