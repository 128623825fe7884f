/**
 * `npm run bench:turns` (and the end of `npm run bench`): what bonsai's agent loop costs per turn
 * on a long session, besides the model. A compacted session of 1k, 10k and 50k entries (about
 * 2 KB each) is opened for writing in an AgentSession with compaction and pruning on, and a
 * scripted model (pi-ai's faux provider) answers 100 prompts at once. Per turn: the CPU time of
 * `prompt()` (the append of both messages, the checks before and after the model call, the
 * context), and the process's peak RSS after the open and after the turns. Targets at 50k
 * (issue 30): median under 1 ms, no turn over 20 ms, peak memory within 2x of the open's.
 * Beside it, pi 1.6.0's session work around each reply on a copy of the same session, on Node 22
 * (bench/turn-child-pi.ts; skipped without `npm run oracle:install`).
 * Writes bench/results/turn-cost.{json,md} unless --no-write.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAssistantMessageEventStream, fauxAssistantMessage, registerFauxProvider } from "@mariozechner/pi-ai";
import { AgentSession } from "../src/agent/agent-session.js";
import { SessionManager } from "../src/session/manager.js";
import { generateSession } from "./generate.js";
import { publish } from "./publish.js";
import { cpuMs, NODE22, PI16, peakRssMb, ROOT } from "./reference-agents.js";

const TURNS = 100;

interface Row {
  entries: number;
  megabytes: number;
  medianMs: number;
  p95Ms: number;
  maxMs: number;
  firstMs: number;
  rssAfterOpenMb: number;
  rssAfterTurnsMb: number;
  /** pi 1.6.0's session work per turn (bench/turn-child-pi.ts), when it is installed */
  pi16?: { medianMs: number; maxMs: number; rssAfterOpenMb: number; rssAfterTurnsMb: number };
}

/** pi 1.6.0's per-turn session work on `file`, in its own Node 22 process. */
function piTurns(file: string): Row["pi16"] {
  if (!existsSync(NODE22) || !existsSync(PI16)) return undefined;
  const task = JSON.stringify({ module: PI16, file, turns: TURNS });
  const out = execFileSync(NODE22, ["--expose-gc", "--import", "tsx", join(ROOT, "bench/turn-child-pi.ts"), task], { cwd: ROOT, encoding: "utf8", maxBuffer: 1 << 20 });
  const r = JSON.parse(out.trim().split("\n").pop()!) as { times: number[]; rssAfterOpenMb: number; rssAfterTurnsMb: number };
  return { medianMs: at(r.times, 0.5), maxMs: Math.max(...r.times), rssAfterOpenMb: r.rssAfterOpenMb, rssAfterTurnsMb: r.rssAfterTurnsMb };
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const at = (xs: number[], q: number) => sorted(xs)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const rssMb = () => process.memoryUsage().rss / 1048576;

async function measure(entries: number, dir: string): Promise<Row> {
  const file = join(dir, `${entries}.jsonl`);
  const g = generateSession(file, { entries, branched: false, scale: 8, compactEvery: 400 });
  const piCopy = join(dir, `${entries}-pi.jsonl`);
  copyFileSync(file, piCopy);
  const faux = registerFauxProvider({ models: [{ id: "bench", contextWindow: 200_000, maxTokens: 500 }] });
  const manager = SessionManager.open(file);
  const session = await AgentSession.create({
    sessionManager: manager,
    model: faux.getModel() as never,
    systemPrompt: "You are terse.",
    getApiKey: () => "bench",
    settings: { retry: { baseDelayMs: 1 } },
    // the model's own work left out: a reply at once, its usage a context of 60k tokens
    streamFn: () => {
      const stream = createAssistantMessageEventStream();
      const message = { ...fauxAssistantMessage("ok"), usage: { input: 60_000, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 60_002, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } } };
      queueMicrotask(() => {
        stream.push({ type: "start", partial: message });
        stream.push({ type: "done", reason: "stop", message });
      });
      return stream;
    },
  });
  (globalThis as { gc?: () => void }).gc?.();
  const rssAfterOpenMb = Math.max(rssMb(), peakRssMb());
  const times: number[] = [];
  for (let i = 0; i < TURNS; i++) {
    const start = process.cpuUsage();
    await session.prompt(`turn ${i}: go on`);
    times.push(cpuMs(start));
  }
  const rssAfterTurnsMb = peakRssMb();
  faux.unregister();
  manager.close();
  return {
    entries,
    megabytes: Number((g.bytes / 1e6).toFixed(1)),
    medianMs: at(times, 0.5),
    p95Ms: at(times, 0.95),
    maxMs: Math.max(...times),
    firstMs: times[0],
    rssAfterOpenMb,
    rssAfterTurnsMb,
    pi16: piTurns(piCopy),
  };
}

async function main(): Promise<void> {
  const only = process.argv.indexOf("--entries");
  const sizes = only >= 0 ? [Number(process.argv[only + 1])] : process.argv.includes("--quick") ? [1_000, 10_000] : [1_000, 10_000, 50_000];
  const dir = mkdtempSync(join(tmpdir(), "bonsai-turn-cost-"));
  const rows: Row[] = [];
  try {
    for (const entries of sizes) rows.push(await measure(entries, dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const f = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
  const lines = [
    "# Cost of a turn in the agent loop",
    "",
    `CPU time of AgentSession.prompt() with a scripted model that answers at once, ${TURNS} turns on a compacted session opened for writing (compaction and pruning on). Peak RSS after the open, and after the turns.`,
    "",
    "| session | median | p95 | slowest | first turn | peak RSS after open | after the turns | pi 1.6.0: median | slowest | pi 1.6.0 / bonsai, median |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.entries / 1000}k entries (${r.megabytes.toFixed(0)} MB) | ${f(r.medianMs)} ms | ${f(r.p95Ms)} ms | ${f(r.maxMs)} ms | ${f(r.firstMs)} ms | ${r.rssAfterOpenMb.toFixed(0)} MB | ${r.rssAfterTurnsMb.toFixed(0)} MB | ${r.pi16 ? `${f(r.pi16.medianMs)} ms | ${f(r.pi16.maxMs)} ms | **${(r.pi16.medianMs / r.medianMs).toFixed(2)}**` : "- | - | -"} |`,
    ),
    "",
    "pi 1.6.0: the session work its AgentSession does around each reply (append both messages, build the session projection, walk the branch twice), on a copy of the same session, on Node 22 (bench/turn-child-pi.ts).",
    "",
  ];
  publish("turn-cost", lines.join("\n"), { date: new Date().toISOString(), turns: TURNS, rows }, process.argv);
}

await main();
