/**
 * One configuration story: which summarizer a command uses (flags, then the settings, then the
 * BONSAI_* environment), and `bonsai compact` reading `.bonsai/settings.json` and BONSAI_BASE_URL.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { configuredSummarizer, modelFromEnvironment } from "../../src/config/environment.js";
import { resolveSettings } from "../../src/config/settings.js";
import { SessionManager } from "../../src/session/manager.js";
import { a, messageOf, text, u } from "../helpers/paths.js";
import { tempDir } from "../helpers/session-builders.js";
import { startScriptedServer } from "../helpers/sse-server.js";
import { BONSAI_ARGS } from "../helpers/bonsai-bin.js";

describe("configuredSummarizer", () => {
  const env = { BONSAI_BASE_URL: "http://127.0.0.1:9/v1", BONSAI_MODEL_ID: "qwen", BONSAI_MODEL: "anthropic/claude-haiku-4-5" };
  test("flags win over everything", () => {
    const settings = resolveSettings({ compaction: { model: "openai/gpt-4o-mini" } });
    assert.deepEqual(configuredSummarizer({ model: "google/gemini-2.5-flash" }, settings, env), { model: "google/gemini-2.5-flash", origin: "flags" });
  });
  test("then compaction.remoteEndpoint, then compaction.model", () => {
    const both = resolveSettings({ compaction: { model: "openai/gpt-4o-mini", remoteEndpoint: "http://127.0.0.1:1/summarize" } });
    assert.deepEqual(configuredSummarizer({}, both, env), { remote: "http://127.0.0.1:1/summarize", origin: "compaction.remoteEndpoint" });
    const model = resolveSettings({ compaction: { model: "openai/gpt-4o-mini" } });
    assert.deepEqual(configuredSummarizer({}, model, env), { model: "openai/gpt-4o-mini", origin: "compaction.model" });
  });
  test("then the chat model of the environment, BONSAI_BASE_URL before BONSAI_MODEL; nothing leaves the default", () => {
    const defaults = resolveSettings();
    assert.deepEqual(configuredSummarizer({}, defaults, env), { baseUrl: env.BONSAI_BASE_URL, modelId: "qwen", origin: "BONSAI_BASE_URL" });
    assert.deepEqual(configuredSummarizer({ modelId: "llama" }, defaults, env).modelId, "llama");
    assert.deepEqual(configuredSummarizer({}, defaults, { BONSAI_MODEL: env.BONSAI_MODEL }), { model: env.BONSAI_MODEL, origin: "BONSAI_MODEL" });
    assert.deepEqual(configuredSummarizer({}, defaults, {}), { origin: "none" });
    assert.deepEqual(modelFromEnvironment({}), {});
    // BONSAI_API says what the server speaks; --api wins over it
    const gateway = { BONSAI_BASE_URL: "https://gw/anthropic", BONSAI_API: "anthropic-messages" };
    assert.deepEqual(configuredSummarizer({}, defaults, gateway), { baseUrl: gateway.BONSAI_BASE_URL, api: "anthropic-messages", origin: "BONSAI_BASE_URL" });
    assert.equal(configuredSummarizer({ api: "openai-responses" }, defaults, gateway).api, "openai-responses");
  });
});

function bonsai(args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [...BONSAI_ARGS, ...args],
      { cwd, env: { ...process.env, NO_COLOR: "1", BONSAI_BASE_URL: "", BONSAI_MODEL: "", ...env } },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe("bonsai compact reads the settings files and the environment", () => {
  const { dir, cleanup } = tempDir();
  after(cleanup);
  const home = join(dir, "home");
  const project = join(dir, "project");
  mkdirSync(join(home, ".bonsai"), { recursive: true });
  mkdirSync(join(project, ".bonsai"), { recursive: true });
  const file = join(project, "s.jsonl");
  const writer = SessionManager.open(file);
  for (let i = 0; i < 6; i++) {
    writer.appendMessage(messageOf(u(`question ${i} ${text(2000)}`)));
    writer.appendMessage(messageOf(a(`answer ${i} ${text(2000)}`)));
  }
  writer.close();

  test("compaction.keepRecentTokens of the project file; the flag wins", async () => {
    writeFileSync(join(project, ".bonsai", "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 1500 } }));
    const fromFile = await bonsai(["compact", file, "--dry-run", "--json"], project, { HOME: home });
    assert.equal(fromFile.code, 0, fromFile.stderr);
    assert.equal(JSON.parse(fromFile.stdout).keepRecentTokens, 1500);
    const flag = await bonsai(["compact", file, "--dry-run", "--json", "--keep-recent", "700"], project, { HOME: home });
    assert.equal(JSON.parse(flag.stdout).keepRecentTokens, 700);
  });

  test("a malformed settings file is a one-line error naming the file and key", async () => {
    writeFileSync(join(project, ".bonsai", "settings.json"), JSON.stringify({ compaction: { thresholdPercent: 0 } }));
    const run = await bonsai(["compact", file, "--dry-run"], project, { HOME: home });
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /settings\.json: compaction\.thresholdPercent: expected a percentage/);
    writeFileSync(join(project, ".bonsai", "settings.json"), "{}");
  });

  test("BONSAI_BASE_URL summarizes, as it is bonsai chat's model", async () => {
    const server = await startScriptedServer(() => ({ text: "## Goal\nSummarized by the BONSAI_BASE_URL server.", promptTokens: 50 }));
    try {
      const run = await bonsai(["compact", file, "--json", "--no-short-summary", "--keep-recent", "700"], project, { HOME: home, BONSAI_BASE_URL: server.baseUrl, BONSAI_MODEL_ID: "scripted" });
      assert.equal(run.code, 0, run.stderr);
      const report = JSON.parse(run.stdout);
      assert.match(report.summary, /Summarized by the BONSAI_BASE_URL server/);
      assert.ok(server.requests.length > 0, "the server was asked");
    } finally {
      await server.close();
    }
  });
});
