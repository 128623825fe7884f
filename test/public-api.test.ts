/**
 * The package root keeps the public contract (README, Library): dropping or renaming one of
 * these exports (or a method the contract names) breaks code written against the reference.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import * as api from "../src/index.js";
import { ROOT } from "./helpers/cli.js";

const FUNCTIONS = [
  "buildSessionContext",
  "parseSessionEntries",
  "migrateSessionEntries",
  "convertToLlm",
  "serializeConversation",
  "estimateTokens",
  "calculateContextTokens",
  "getLastAssistantUsage",
  "shouldCompact",
  "findCutPoint",
  "prepareCompaction",
  "compact",
  "pruneToolOutputs",
  "collectEntriesForBranchSummary",
  "prepareBranchEntries",
  "generateBranchSummary",
  "loadSettings",
] as const;

const SESSION_MANAGER_STATICS = ["open", "create", "inMemory"] as const;

const SESSION_MANAGER_METHODS = [
  "getEntries",
  "getEntry",
  "getHeader",
  "getLeafId",
  "getLeafEntry",
  "getBranch",
  "getChildren",
  "getTree",
  "getLabel",
  "buildSessionContext",
  "appendMessage",
  "appendThinkingLevelChange",
  "appendModelChange",
  "appendCompaction",
  "appendCustomEntry",
  "appendCustomMessageEntry",
  "appendLabelChange",
  "appendSessionInfo",
  "branch",
  "resetLeaf",
  "branchWithSummary",
  "createBranchedSession",
  "close",
] as const;

const AGENT_SESSION_METHODS = [
  "compact",
  "abortCompaction",
  "navigateTree",
  "abortBranchSummary",
  "subscribe",
  "getContextUsage",
] as const;

/** Every value the package root exports: the documented contract, and nothing by accident. */
const ROOT_NAMES = [
  "AUTO_CONTINUE_PROMPT",
  "AgentSession",
  "CURRENT_SESSION_VERSION",
  "CompactionError",
  "DEFAULT_COMPACTION_SETTINGS",
  "DEFAULT_PRUNE_CONFIG",
  "DEFAULT_SETTINGS",
  "LocationError",
  "ModelCallError",
  "SessionFileError",
  "SessionLockedError",
  "SessionManager",
  "SettingsError",
  "StoreVersionError",
  "SummarizationAbortedError",
  "SummarizerConfigError",
  "buildSessionContext",
  "calculateContextTokens",
  "collectEntriesForBranchSummary",
  "compact",
  "convertToLlm",
  "estimateContextTokens",
  "estimateTokens",
  "extractiveSummarizer",
  "findCutPoint",
  "findTurnStartIndex",
  "findValidCutPoints",
  "generateBranchSummary",
  "getLastAssistantUsage",
  "loadSessionFile",
  "loadSettings",
  "migrateSessionEntries",
  "openAiCompatibleModel",
  "parseSessionEntries",
  "piAiSummarizer",
  "prepareBranchEntries",
  "prepareCompaction",
  "pruneToolOutputs",
  "redactSecrets",
  "remoteSummarizer",
  "resolveSettings",
  "serializeConversation",
  "shouldCompact",
  "withRedaction",
  "withoutStrayToolResults",
];

/** Subpath entries: the file behind each, and names each must have. */
// each entry file is imported by a literal path, so the suite's bundler sees it (scripts/test-bundles.ts)
const SUBPATHS: Record<string, { file: string; names: string[]; load: () => Promise<Record<string, unknown>> }> = {
  "./stores": {
    file: "exports/stores",
    names: ["parseLocation", "formatLocation", "openSessionAt", "listSessionsAt", "readLinesAt", "copySession"],
    load: () => import("../src/exports/stores.js"),
  },
  "./ops": {
    file: "exports/ops",
    names: ["compactSession", "checkoutSession", "navigateTree", "pruneToolOutput", "restoreToolOutput", "migrateSession", "setLabel", "sessionInfo", "sessionContextReport", "evaluateSummaries"],
    load: () => import("../src/exports/ops.js"),
  },
  "./prompts": { file: "exports/prompts", names: ["COMPACTION_SYSTEM_PROMPT", "BRANCH_SUMMARY_PROMPT", "assembleSummaryPrompt"], load: () => import("../src/exports/prompts.js") },
  "./server": { file: "exports/server", names: ["startSummarizationServer"], load: () => import("../src/exports/server.js") },
};

const exported = api as unknown as Record<string, unknown>;

describe("public API (package root)", () => {
  it("exports exactly the contract's names at the root", () => {
    assert.deepEqual(Object.keys(api).sort(), [...ROOT_NAMES].sort());
  });

  it("has each subpath in package.json, built from its entry file, with its functions", async () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { exports: Record<string, { import: string; types: string }> };
    assert.deepEqual(Object.keys(manifest.exports).sort(), [".", "./package.json", ...Object.keys(SUBPATHS)].sort());
    for (const [subpath, { file, names, load }] of Object.entries(SUBPATHS)) {
      assert.deepEqual(manifest.exports[subpath], { types: `./dist/${file}.d.ts`, import: `./dist/${file}.js` }, subpath);
      const module = await load();
      assert.deepEqual(names.filter((name) => module[name] === undefined), [], `${subpath} exports its names`);
    }
  });

  it("exports every contract function", () => {
    const missing = FUNCTIONS.filter((name) => typeof exported[name] !== "function");
    assert.deepEqual(missing, []);
  });

  it("exports SessionManager with its static constructors and methods", () => {
    assert.equal(typeof api.SessionManager, "function");
    const statics = api.SessionManager as unknown as Record<string, unknown>;
    assert.deepEqual(
      SESSION_MANAGER_STATICS.filter((name) => typeof statics[name] !== "function"),
      [],
    );
    const proto = api.SessionManager.prototype as unknown as Record<string, unknown>;
    assert.deepEqual(
      SESSION_MANAGER_METHODS.filter((name) => typeof proto[name] !== "function"),
      [],
    );
  });

  it("exports AgentSession with its methods and the isCompacting getter", () => {
    assert.equal(typeof api.AgentSession, "function");
    const proto = api.AgentSession.prototype as unknown as Record<string, unknown>;
    assert.deepEqual(
      AGENT_SESSION_METHODS.filter((name) => typeof proto[name] !== "function"),
      [],
    );
    const descriptor = Object.getOwnPropertyDescriptor(api.AgentSession.prototype, "isCompacting");
    assert.equal(typeof descriptor?.get, "function", "isCompacting is a getter");
  });

  it("exports DEFAULT_SETTINGS as a settings object that loadSettings falls back to", () => {
    assert.equal(typeof api.DEFAULT_SETTINGS, "object");
    assert.notEqual(api.DEFAULT_SETTINGS, null);
    assert.ok("compaction" in api.DEFAULT_SETTINGS, "DEFAULT_SETTINGS has a compaction section");
  });

  it("answers the contract's shapes: buildSessionContext and findCutPoint on a small session", () => {
    const session = api.SessionManager.inMemory("/tmp");
    session.appendMessage({ role: "user", content: "hello", timestamp: 1 });
    const context = api.buildSessionContext(session.getEntries(), session.getLeafId());
    assert.deepEqual(Object.keys(context).sort(), ["messages", "model", "thinkingLevel"]);
    assert.equal(context.messages.length, 1);
    const entries = session.getEntries();
    const cut = api.findCutPoint(entries, 0, entries.length, 1);
    assert.deepEqual(Object.keys(cut).sort(), ["firstKeptEntryIndex", "isSplitTurn", "turnStartIndex"]);
  });
});
