/**
 * examples/agent-auto-compaction.ts against a scripted OpenAI-compatible server on 127.0.0.1
 * that reports realistic usage (its prompt size): the example must run to the end and print
 * its automatic compactions.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { startScriptedServer, systemText } from "./helpers/sse-server.js";
import { scriptArgs } from "./helpers/bonsai-bin.js";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "..");

test("the auto-compaction example compacts against a local OpenAI-compatible server", async () => {
  const server = await startScriptedServer((request) => {
    const promptTokens = Math.ceil(JSON.stringify(request.messages).length / 4);
    if (systemText(request).startsWith("You are a patient teacher")) {
      return { text: `Step 1. Prepare. ${"Then continue carefully with the next step. ".repeat(40)}`, promptTokens, completionTokens: 450 };
    }
    return { text: "## Goal\nLearn to build things.\n\n## Progress\n- explained several projects", promptTokens };
  });
  const home = mkdtempSync(join(tmpdir(), "bonsai-"));
  const sessions = join(home, "sessions");
  try {
    const { stdout } = await run(
      process.execPath,
      [
        ...scriptArgs("examples/agent-auto-compaction.ts"),
        "--base-url",
        server.baseUrl,
        "--model-id",
        "scripted",
        "--context-window",
        "2048",
        "--turns",
        "6",
        "--session-dir",
        sessions,
      ],
      // HOME points at an empty directory so the user's own settings do not change the run
      { cwd: ROOT, env: { ...process.env, HOME: home }, timeout: 30_000 },
    );
    const started = stdout.split("\n").filter((l) => l.startsWith("[auto-compaction] started (threshold)"));
    const done = stdout.split("\n").filter((l) => /^\[auto-compaction\] done: a context of \d+ tokens compacted/.test(l));
    assert.ok(started.length >= 1, stdout);
    assert.equal(done.length, started.length, stdout);
    assert.match(stdout, /\[auto-compaction\] summary starts: ## Goal/);
    const last = stdout.trim().split("\n").at(-2) ?? "";
    assert.match(last, new RegExp(`^done: 6 turns, ${started.length} compaction\\(s\\)`));
    assert.equal(readdirSync(sessions).filter((f) => f.endsWith(".jsonl")).length, 1);
    assert.ok(server.requests.some((r) => !systemText(r).startsWith("You are a patient teacher")), "the summarizer used the server");
  } finally {
    await server.close();
    rmSync(home, { recursive: true, force: true });
  }
});

test("the example explains its usage without --base-url", async () => {
  await assert.rejects(run(process.execPath, ["--import", "tsx", "examples/agent-auto-compaction.ts"], { cwd: ROOT }), (error: unknown) => {
    const e = error as { code: number; stderr: string };
    return e.code === 2 && /usage: agent-auto-compaction --base-url/.test(e.stderr);
  });
});
