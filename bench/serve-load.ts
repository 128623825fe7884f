/**
 * Throughput and latency of the summarization server, measured with autocannon from a second
 * process. Run: npm run bench:serve (also at the end of npm run bench). Numbers go into docs/server.md "Summarization
 * server"; they measure the server (HTTP, limits, logging), not a model.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { convertToLlm } from "../src/messages/convert.js";
import { serializeConversation } from "../src/messages/serialize.js";
import { SessionManager } from "../src/session/manager.js";
import { REAL_SESSION } from "../test/helpers/fixtures.js";
import { REPO_DIR, spawnServer } from "../test/helpers/spawn-server.js";

/** A TypeScript entry point run through tsx, as a spawned server needs it. */
const ts = (args: string[]) => ["--import", "tsx", ...args];

interface Result {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number };
  statusCodeStats: Record<string, { count: number }>;
  errors: number;
  duration: number;
}

/** `seconds` of load, or with `amount`, exactly that many requests (all sent at once with as many connections). */
function autocannon(url: string, connections: number, seconds: number, bodyFile: string, amount?: number): Promise<Result> {
  const length = amount === undefined ? ["-d", String(seconds)] : ["-a", String(amount)];
  const args = [join(REPO_DIR, "node_modules/autocannon/autocannon.js"), "-n", "--json", "-c", String(connections), ...length, "-t", "120"];
  args.push("-m", "POST", "-H", "content-type=application/json", "-i", bodyFile, `${url}/summarize`);
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (c) => {
    out += c;
  });
  return new Promise((resolve) => child.on("exit", () => resolve(JSON.parse(out) as Result)));
}

const smallBody = join(tmpdir(), "bonsai-bench-small.json");
writeFileSync(smallBody, JSON.stringify({ systemPrompt: "You summarize.", prompt: "[User]: hello\n\n[Assistant]: hi" }));
const session = SessionManager.open(REAL_SESSION, { readOnly: true });
const conversation = serializeConversation(convertToLlm(session.buildSessionContext().messages));
const largeBody = join(tmpdir(), "bonsai-bench-large.json");
writeFileSync(largeBody, JSON.stringify({ systemPrompt: "You summarize.", prompt: `<conversation>\n${conversation}\n</conversation>\n\nSummarize.` }));

const rows: string[] = [];
function row(label: string, r: Result) {
  const per = (status: string) => ((r.statusCodeStats[status]?.count ?? 0) / r.duration).toFixed(0);
  rows.push(`| ${label} | ${per("200")} | ${per("429")} | ${r.latency.p50} | ${r.latency.p99} | ${r.errors} |`);
}

const fake = await spawnServer(ts(["test/helpers/serve-fake.ts"]), { FAKE_DELAY_MS: "50", MAX_CONCURRENT: "4" });
await autocannon(fake.url, 4, 1, smallBody);
row("fake 50 ms backend, 4 slots, 4 connections", await autocannon(fake.url, 4, 5, smallBody));
row("fake 50 ms backend, 4 slots, 64 connections", await autocannon(fake.url, 64, 5, smallBody));
fake.child.kill("SIGTERM");
await fake.exited;

/** /healthz latencies, one check every 20 ms, while `load` runs. */
async function healthDuring(url: string, load: Promise<unknown>): Promise<number[]> {
  let done = false;
  void load.then(() => {
    done = true;
  });
  const times: number[] = [];
  while (!done) {
    const start = performance.now();
    await fetch(`${url}/healthz`).then((r) => r.arrayBuffer());
    times.push(performance.now() - start);
    await new Promise((r) => setTimeout(r, 20));
  }
  return times;
}

// health checks under 100 summaries at once, summarized on worker threads (the default) and on the event loop
const healthRows: string[] = [];
for (const threads of [undefined, "0"]) {
  const args = ["src/cli/main.ts", "serve", "--port", "0", "--extractive", "--max-concurrent", "100", ...(threads ? ["--threads", threads] : [])];
  const server = await spawnServer(ts(args));
  const load = autocannon(server.url, 100, 0, largeBody, 100);
  const times = (await healthDuring(server.url, load)).sort((a, b) => a - b);
  const r = await load;
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(1);
  const label = threads === "0" ? "on the event loop (--threads 0)" : "on worker threads (default)";
  healthRows.push(`| ${label} | ${at(0.5)} | ${at(0.95)} | ${times.at(-1)!.toFixed(1)} | ${times.length} | ${r.statusCodeStats["200"]?.count ?? 0} in ${r.duration.toFixed(1)} s |`);
  server.child.kill("SIGTERM");
  await server.exited;
}

const extractive = await spawnServer(ts(["src/cli/main.ts", "serve", "--port", "0", "--extractive", "--max-concurrent", "2"]));
await autocannon(extractive.url, 2, 1, largeBody);
row(`extractive, ${(conversation.length / 1024).toFixed(0)} KB real transcript, 2 slots, 2 connections`, await autocannon(extractive.url, 2, 5, largeBody));
extractive.child.kill("SIGTERM");
await extractive.exited;

console.log("| scenario | 200/s | 429/s | p50 ms | p99 ms | errors |");
console.log("|---|---|---|---|---|---|");
for (const line of rows) console.log(line);
console.log(`\n/healthz while 100 extractive summaries of the ${(conversation.length / 1024).toFixed(0)} KB transcript are in flight (ms; target: p95 under 50):\n`);
console.log("| summarized | p50 | p95 | slowest | checks | summaries answered |");
console.log("|---|---:|---:|---:|---:|---:|");
for (const line of healthRows) console.log(line);
