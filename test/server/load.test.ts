/**
 * Load on a real `bonsai serve`-style process from a second process (autocannon): overload
 * must turn into 429s, never into crashes, queues or memory growth; a SIGTERM under load must
 * finish every request the server accepted.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { REPO_DIR, spawnServer } from "../helpers/spawn-server.js";
import { scriptArgs } from "../helpers/bonsai-bin.js";

interface AutocannonResult {
  errors: number;
  timeouts: number;
  "2xx": number;
  non2xx: number;
  statusCodeStats: Record<string, { count: number }>;
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
}

const BODY = JSON.stringify({ systemPrompt: "You summarize.", prompt: "[User]: hello\n\n[Assistant]: hi" });

function autocannon(url: string, connections: number, seconds: number): Promise<AutocannonResult> {
  const cli = join(REPO_DIR, "node_modules/autocannon/autocannon.js");
  const args = [cli, "-n", "--json", "-c", String(connections), "-d", String(seconds), "-m", "POST"];
  args.push("-H", "content-type=application/json", "-b", BODY, `${url}/summarize`);
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (c) => {
    out += c;
  });
  child.stderr.on("data", (c) => {
    err += c;
  });
  return new Promise((resolve, reject) => {
    child.on("exit", (code) => {
      try {
        resolve(JSON.parse(out) as AutocannonResult);
      } catch {
        reject(new Error(`autocannon exited ${code} without JSON: ${err.slice(0, 500)}`));
      }
    });
  });
}

const rssKb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
const statuses = (r: AutocannonResult) => Object.keys(r.statusCodeStats).sort();

describe("server under load", () => {
  it("sheds overload with 429s, stays up, and keeps memory flat", async () => {
    const server = await spawnServer(scriptArgs("test/helpers/serve-fake.ts"), { FAKE_DELAY_MS: "50", MAX_CONCURRENT: "4" });
    const pid = server.child.pid!;
    try {
      await autocannon(server.url, 16, 1); // warm-up: JIT, pools, buffers
      const before = rssKb(pid);
      const started = Date.now();
      const load = await autocannon(server.url, 32, 3);
      const elapsed = Date.now() - started;
      const after = rssKb(pid);

      assert.ok(elapsed < 20_000, `a 3 s load ends, it does not hang: ${elapsed} ms`);
      assert.equal(load.errors, 0, "no connection errors");
      assert.equal(load.timeouts, 0);
      assert.deepEqual(statuses(load), ["200", "429"], "only successes and overload answers");
      const ok = load.statusCodeStats["200"].count;
      const busy = load.statusCodeStats["429"].count;
      // 4 slots of 50 ms each bound the successes at about 80 per second: never more (the limit
      // holds), and some (it keeps serving; how many depends on the machine: 76 with a second
      // test suite running beside this one, 200 or more alone)
      assert.ok(ok >= 10 && ok <= 4 * 3 * 22, `200s: ${ok}`);
      assert.ok(busy > 0, `429s: ${busy}`);
      const growthMb = (after - before) / 1024;
      assert.ok(growthMb < 60, `RSS grew ${growthMb.toFixed(1)} MB (${before} → ${after} kB)`);
      const health = await fetch(`${server.url}/healthz`);
      assert.equal(health.status, 200);
      assert.equal(((await health.json()) as { inFlight: number }).inFlight, 0, "every slot came back");
      assert.equal(server.child.exitCode, null, "still running");
      // the log lines travel through a pipe: give the last ones a moment to arrive
      const summaryLogs = () => server.logs.filter((l) => l.event === "request" && l.path === "/summarize");
      for (let i = 0; i < 100 && summaryLogs().length < load.requests.total; i++) await new Promise((r) => setTimeout(r, 20));
      const logged = summaryLogs();
      assert.ok(logged.length >= load.requests.total, `one log line per request: ${logged.length} for ${load.requests.total}`);
      // autocannon closes its connections when time is up, with requests still in progress: those
      // (at most one per connection and run) are logged as 499, everything else is 200 or 429.
      const odd = logged.filter((l) => l.status !== 200 && l.status !== 429);
      assert.ok(odd.every((l) => l.status === 499 && l.clientClosed === true), JSON.stringify(odd.slice(0, 2)));
      assert.ok(odd.length <= 16 + 32, `${odd.length} client-closed requests`);
    } finally {
      server.child.kill("SIGTERM");
      await server.exited;
    }
  });

  it("loses no accepted request when SIGTERM arrives under load", async () => {
    const server = await spawnServer(scriptArgs("test/helpers/serve-fake.ts"), { FAKE_DELAY_MS: "200", MAX_CONCURRENT: "8" });
    const running = autocannon(server.url, 16, 3);
    // the signal lands once the load flows (a summary answered), not after a fixed time that a busy
    // machine may spend starting the load generator
    const deadline = Date.now() + 10_000;
    while (!server.logs.some((l) => l.event === "request" && l.status === 200) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    server.child.kill("SIGTERM");
    const [load, exitCode] = await Promise.all([running, server.exited]);
    assert.equal(exitCode, 0, "clean exit after draining");
    const summaries = server.logs.filter((l) => l.event === "request" && l.path === "/summarize");
    const accepted = summaries.filter((l) => l.status !== 429 && l.status !== 503);
    assert.ok(accepted.length > 0);
    assert.ok(
      accepted.every((l) => l.status === 200),
      `every accepted summarization finished: ${JSON.stringify(accepted.filter((l) => l.status !== 200))}`,
    );
    assert.equal(load["2xx"], accepted.length, "every 200 the server sent reached its client");
    const shutdownAt = server.logs.findIndex((l) => l.event === "shutdown");
    assert.ok(
      server.logs.slice(shutdownAt).some((l) => l.event === "request" && l.status === 200),
      "requests in progress at the signal completed",
    );
    assert.equal(server.logs[server.logs.length - 1].event, "stopped");
  });
});
