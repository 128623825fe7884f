/**
 * The package root keeps the public contract (README, Library): dropping or renaming one of
 * these exports (or a method the contract names) breaks code written against the reference.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as api from "../src/index.js";

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

const exported = api as unknown as Record<string, unknown>;

describe("public API (package root)", () => {
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
