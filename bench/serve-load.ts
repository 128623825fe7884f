/**
 * Throughput and latency of the summarization server, measured with autocannon from a second
 * process. Run: node --import tsx bench/serve-load.ts. Numbers go into docs/server.md "Summarization
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

interface Result {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number };
  statusCodeStats: Record<string, { count: number }>;
  errors: number;
  duration: number;
}

function autocannon(url: string, connections: number, seconds: number, bodyFile: string): Promise<Result> {
  const args = [join(REPO_DIR, "node_modules/autocannon/autocannon.js"), "-n", "--json", "-c", String(connections), "-d", String(seconds)];
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

const fake = await spawnServer(["test/helpers/serve-fake.ts"], { FAKE_DELAY_MS: "50", MAX_CONCURRENT: "4" });
await autocannon(fake.url, 4, 1, smallBody);
row("fake 50 ms backend, 4 slots, 4 connections", await autocannon(fake.url, 4, 5, smallBody));
row("fake 50 ms backend, 4 slots, 64 connections", await autocannon(fake.url, 64, 5, smallBody));
fake.child.kill("SIGTERM");
await fake.exited;

const extractive = await spawnServer(["src/cli/main.ts", "serve", "--port", "0", "--extractive", "--max-concurrent", "2"]);
await autocannon(extractive.url, 2, 1, largeBody);
row(`extractive, ${(conversation.length / 1024).toFixed(0)} KB real transcript, 2 slots, 2 connections`, await autocannon(extractive.url, 2, 5, largeBody));
extractive.child.kill("SIGTERM");
await extractive.exited;

console.log("| scenario | 200/s | 429/s | p50 ms | p99 ms | errors |");
console.log("|---|---|---|---|---|---|");
for (const line of rows) console.log(line);
