/**
 * Issue 6's "done when": compaction goes through a live summarization server. Once through
 * compact() with the remote summarizer on the real fixture, once through an AgentSession whose
 * settings point compaction.remoteEndpoint at the server.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compact } from "../../src/compaction/compact.js";
import { prepareCompaction } from "../../src/compaction/prepare.js";
import { DEFAULT_COMPACTION_SETTINGS } from "../../src/compaction/settings.js";
import { SUMMARY_SECTIONS } from "../../src/prompts/compaction.js";
import { startServer } from "../../src/server/app.js";
import { SessionManager } from "../../src/session/manager.js";
import { EXTRACTIVE_LABEL, extractiveSummarizer } from "../../src/summarizer/extractive.js";
import { remoteSummarizer } from "../../src/summarizer/remote.js";
import { createHarness, bigText } from "../helpers/agent-harness.js";
import { REAL_SESSION } from "../helpers/fixtures.js";

describe("compaction through bonsai serve", () => {
  it("compact() with the remote summarizer summarizes the real session on a live server", async () => {
    const logs: Record<string, unknown>[] = [];
    const server = await startServer({
      summarizer: extractiveSummarizer(),
      token: "e2e-token",
      port: 0,
      log: (line) => logs.push(JSON.parse(line)),
    });
    try {
      const session = SessionManager.open(REAL_SESSION, { readOnly: true });
      const preparation = prepareCompaction(session.getBranch(), DEFAULT_COMPACTION_SETTINGS);
      assert.ok(preparation);
      const result = await compact(preparation, remoteSummarizer({ url: `${server.url}/summarize`, token: "e2e-token" }));
      assert.ok(result.summary.startsWith(EXTRACTIVE_LABEL), "the server wrote the summary");
      for (const section of SUMMARY_SECTIONS) assert.ok(result.summary.includes(`\n## ${section}\n`), section);
      for (const file of result.details.modifiedFiles) assert.ok(result.summary.includes(file), file);
      assert.ok(result.shortSummary && !result.shortSummary.includes("## "), "a short summary, from the short purpose");
      const requests = logs.filter((l) => l.event === "request");
      assert.ok(requests.length >= 2, "history and short summary requests");
      assert.ok(requests.every((l) => l.status === 200));
      assert.deepEqual(new Set(requests.map((l) => l.purpose)).has("short"), true);
    } finally {
      await server.close();
    }
  });

  it("an AgentSession with compaction.remoteEndpoint compacts through the server", async () => {
    const logs: Record<string, unknown>[] = [];
    const server = await startServer({
      summarizer: extractiveSummarizer(),
      token: "agent-token",
      port: 0,
      log: (line) => logs.push(JSON.parse(line)),
    });
    const savedToken = process.env.BONSAI_SERVER_TOKEN;
    process.env.BONSAI_SERVER_TOKEN = "agent-token";
    const harness = await createHarness({
      models: [{ id: "main", contextWindow: 8000 }],
      settings: { compaction: { keepRecentTokens: 100, remoteEndpoint: `${server.url}/summarize` } },
      session: { summarizer: undefined },
    });
    try {
      await harness.session.prompt(bigText("Please port the selector to the theme API", 200));
      await harness.session.prompt(bigText("Now update the docs", 200));
      const result = await harness.session.compact();
      assert.ok(result.summary.startsWith(EXTRACTIVE_LABEL), result.summary.slice(0, 200));
      assert.match(result.summary, /Please port the selector to the theme API/);
      const requests = logs.filter((l) => l.event === "request" && l.path === "/summarize");
      assert.ok(requests.length >= 1);
      assert.ok(requests.every((l) => l.status === 200), JSON.stringify(requests));
    } finally {
      harness.cleanup();
      if (savedToken === undefined) delete process.env.BONSAI_SERVER_TOKEN;
      else process.env.BONSAI_SERVER_TOKEN = savedToken;
      await server.close();
    }
  });
});
