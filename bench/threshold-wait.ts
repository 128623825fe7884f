/**
 * `npm run bench:compaction`: how long the agent waits when its context crosses the compaction
 * threshold inside a turn, with and without background summaries. A scripted model (pi-ai's faux
 * provider) calls a tool whose results fill the context; the summarizer takes 2 s per summary.
 * The wait is the time from the threshold being crossed (auto_compaction_start, midTurn) to the
 * next model call. Target: under 50 ms with background summaries, about 2 s without.
 * Writes bench/results/threshold-wait.json and .md (unless --no-write).
 *
 *   npm run bench:compaction
 *   npm run bench:compaction -- --summary-ms 500 --no-write
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fauxAssistantMessage, fauxToolCall, registerFauxProvider, streamSimple, Type } from "@mariozechner/pi-ai";
import { AgentSession } from "../src/agent/agent-session.js";
import { SessionManager } from "../src/session/manager.js";
import { SummarizationAbortedError, type Summarizer } from "../src/summarizer/types.js";

const RESULTS = resolve(import.meta.dirname, "results");

interface Options {
  summaryMs: number;
  write: boolean;
}

function parseArgs(argv: string[]): Options {
  const options: Options = { summaryMs: 2000, write: true };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--summary-ms") options.summaryMs = Number(argv[++i]);
    else if (argv[i] === "--no-write") options.write = false;
    else throw new Error(`unknown option ${argv[i]}; see the comment at the top of bench/threshold-wait.ts`);
  }
  if (!(options.summaryMs >= 0)) throw new Error("--summary-ms needs a number of milliseconds");
  return options;
}

/** A summarizer that takes `ms` per history summary (abortable), and answers short ones at once. */
function slowSummarizer(ms: number): Summarizer {
  let count = 0;
  return {
    name: "scripted-2s",
    contextWindow: 0,
    reasoning: false,
    async summarize(request) {
      if (request.purpose !== "short") {
        await new Promise<void>((done, fail) => {
          const timer = setTimeout(done, ms);
          request.signal?.addEventListener("abort", () => {
            clearTimeout(timer);
            fail(new SummarizationAbortedError());
          });
        });
      }
      return { text: request.purpose === "short" ? "short" : `## Goal\nSummary ${++count}` };
    },
  };
}

interface Run {
  backgroundPercent: number;
  /** ms from the threshold being crossed to the next model call, per mid-turn compaction */
  waits: number[];
  compactions: number;
  usedBackground: number;
  turnMs: number;
}

async function scenario(backgroundPercent: number, summaryMs: number): Promise<Run> {
  const faux = registerFauxProvider({ models: [{ id: "bench", contextWindow: 10_000, maxTokens: 500 }] });
  let calls = 0;
  faux.setResponses(
    Array.from({ length: 40 }, () => (context: { messages: { role: string; content: unknown }[] }) => {
      const last = context.messages.at(-1);
      if (last?.role === "user" && JSON.stringify(last.content).includes("context so far")) return fauxAssistantMessage("noted");
      calls++;
      return calls <= 12 ? fauxAssistantMessage(fauxToolCall("lookup", { key: `k${calls}` }), { stopReason: "toolUse" }) : fauxAssistantMessage("done");
    }),
  );
  const lookup = {
    name: "lookup",
    label: "Lookup",
    description: "looks something up (takes 600 ms)",
    parameters: Type.Object({ key: Type.String() }),
    execute: async (_id: string, params: { key: string }) => {
      await new Promise((r) => setTimeout(r, 600));
      return { content: [{ type: "text" as const, text: `value of ${params.key}: ${"data ".repeat(320)}` }], details: {} };
    },
  };
  const modelCalls: number[] = [];
  const manager = SessionManager.inMemory("/bench");
  const session = await AgentSession.create({
    sessionManager: manager,
    model: faux.getModel() as never,
    systemPrompt: "You are terse.",
    getApiKey: () => "bench",
    summarizer: slowSummarizer(summaryMs),
    tools: [lookup as never],
    prune: false,
    settings: { compaction: { reserveTokens: 2000, keepRecentTokens: 1000, backgroundPercent }, retry: { baseDelayMs: 1 } },
    streamFn: (model, context, options) => {
      modelCalls.push(performance.now());
      return streamSimple(model, context, options);
    },
  });
  const crossed: number[] = [];
  let usedBackground = 0;
  let compactions = 0;
  session.subscribe((event) => {
    if (event.type === "auto_compaction_start" && event.midTurn) crossed.push(performance.now());
    if (event.type === "auto_compaction_end" && event.result) compactions++;
    if (event.type === "background_summary" && event.status === "used") usedBackground++;
  });
  const started = performance.now();
  // Fill the context to just below the background level, then a turn of tool calls crosses it.
  await session.prompt(`context so far: ${"detail ".repeat(2850)}`);
  await session.prompt("look up twelve keys");
  const turnMs = performance.now() - started;
  const waits = crossed.map((at) => (modelCalls.find((call) => call > at) ?? Number.NaN) - at);
  faux.unregister();
  manager.close();
  return { backgroundPercent, waits, compactions, usedBackground, turnMs };
}

const ms = (value: number) => (Number.isFinite(value) ? `${value < 10 ? value.toFixed(2) : value.toFixed(0)} ms` : "n/a");

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const runs = [await scenario(80, options.summaryMs), await scenario(0, options.summaryMs)];
  const rows = runs.map((run) => {
    const worst = Math.max(...run.waits);
    return [
      run.backgroundPercent > 0 ? `background summaries (backgroundPercent ${run.backgroundPercent})` : "no background summaries (backgroundPercent 0)",
      ms(worst),
      String(run.waits.length),
      String(run.usedBackground),
      ms(run.turnMs),
    ];
  });
  const withBg = Math.max(...runs[0].waits);
  const target = withBg < 50 ? "met" : "missed";
  const lines = [
    "# Threshold wait",
    "",
    `Time from the context crossing the compaction threshold inside a turn to the next model call; the summarizer takes ${options.summaryMs} ms per summary. Target: under 50 ms with background summaries (${target}).`,
    "",
    "| run | wait at the threshold (worst) | mid-turn compactions | from a background summary | whole run |",
    "|---|---|---|---|---|",
    ...rows.map((row) => `| ${row.join(" | ")} |`),
    "",
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  if (options.write) {
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(join(RESULTS, "threshold-wait.md"), `${lines.join("\n")}\n`);
    writeFileSync(join(RESULTS, "threshold-wait.json"), `${JSON.stringify({ date: new Date().toISOString(), summaryMs: options.summaryMs, runs }, null, 2)}\n`);
  }
}

await main();
