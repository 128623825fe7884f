/**
 * A tiny agent that shows automatic compaction: it talks to any OpenAI-compatible server
 * (Ollama, llama.cpp, vLLM, …) with a deliberately small context window, asks a few questions
 * that need long answers, and prints what AgentSession does when the context fills up.
 *
 *   npx tsx examples/agent-auto-compaction.ts --base-url http://127.0.0.1:8080/v1 [--model-id M]
 *     [--context-window 4096] [--turns 6] [--api-key K] [--session-dir DIR]
 */
import { parseArgs } from "node:util";
import { AgentSession, loadSettings, SessionManager } from "../src/index.js";
import { openAiCompatibleApiKey, openAiCompatibleModel } from "../src/summarizer/pi-ai.js";

const { values } = parseArgs({
  options: {
    "base-url": { type: "string" },
    "model-id": { type: "string", default: "default" },
    "context-window": { type: "string", default: "4096" },
    turns: { type: "string", default: "6" },
    "api-key": { type: "string" },
    "session-dir": { type: "string" },
  },
});
if (!values["base-url"]) {
  console.error("usage: agent-auto-compaction --base-url http://127.0.0.1:8080/v1 [--model-id M] [--context-window N] [--turns N]");
  process.exit(2);
}
const contextWindow = Number(values["context-window"]);
const turns = Number(values.turns);
if (!Number.isInteger(contextWindow) || contextWindow < 2048 || !Number.isInteger(turns) || turns < 1) {
  console.error("--context-window must be an integer of at least 2048 (the summary prompts need room) and --turns a positive integer");
  process.exit(2);
}

const model = openAiCompatibleModel({
  baseUrl: values["base-url"],
  modelId: values["model-id"],
  contextWindow,
  maxTokens: Math.floor(contextWindow / 8),
});
const sessionManager = values["session-dir"]
  ? SessionManager.create(process.cwd(), values["session-dir"])
  : SessionManager.inMemory(process.cwd());

// The user's and project's settings, with a reserve and a kept tail scaled to the small window,
// so compaction happens after a few turns.
const settings = loadSettings();
const session = await AgentSession.create({
  sessionManager,
  model,
  systemPrompt: "You are a patient teacher. Answer in detail, with numbered steps.",
  getApiKey: () => openAiCompatibleApiKey(values["api-key"]),
  settings: {
    ...settings,
    compaction: {
      ...settings.compaction,
      reserveTokens: Math.floor(contextWindow / 4),
      keepRecentTokens: Math.floor(contextWindow / 8),
    },
  },
});

const short = (text: string, max = 100) => {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

session.subscribe((event) => {
  switch (event.type) {
    case "message_end":
      if (event.message.role === "assistant") {
        const text = event.message.content.map((b) => (b.type === "text" ? b.text : "")).join("");
        const status = event.message.stopReason === "stop" ? "" : ` [${event.message.stopReason}: ${event.message.errorMessage ?? ""}]`;
        console.log(`  assistant: ${short(text)}${status}`);
      }
      break;
    case "auto_compaction_start":
      console.log(`[auto-compaction] started (${event.reason})`);
      break;
    case "auto_compaction_end":
      if (event.result) {
        console.log(
          `[auto-compaction] done: a context of ${event.result.tokensBefore} tokens compacted into a summary of ${event.result.summary.length} characters; ` +
            `kept from entry ${event.result.firstKeptEntryId}${event.willRetry ? "; retrying the turn" : ""}`,
        );
        console.log(`[auto-compaction] summary starts: ${short(event.result.summary, 140)}`);
      } else {
        console.log(`[auto-compaction] ${event.aborted ? "cancelled" : `failed: ${event.errorMessage ?? "nothing to compact"}`}`);
      }
      break;
    case "auto_retry_start":
      console.log(`[retry] attempt ${event.attempt}/${event.maxAttempts} in ${event.delayMs} ms: ${short(event.errorMessage)}`);
      break;
    case "warning":
      console.log(`[warning] ${event.message}`);
      break;
  }
});

const topics = ["a wooden birdhouse", "a sourdough starter", "a small vegetable garden", "a bicycle wheel", "a compost heap", "a bookshelf"];
for (let turn = 0; turn < turns; turn++) {
  const question = `Explain, step by step and in detail, how to build ${topics[turn % topics.length]}.`;
  console.log(`user: ${question}`);
  await session.prompt(question);
  const usage = session.getContextUsage();
  const shown = usage?.tokens == null ? "unknown until the next answer" : `${usage.tokens} tokens (${usage.percent?.toFixed(0)}%)`;
  console.log(`  context: ${shown} of ${contextWindow}`);
}

const compactions = sessionManager.getEntries().filter((entry) => entry.type === "compaction").length;
console.log(`done: ${turns} turns, ${compactions} compaction(s), ${sessionManager.getEntries().length} entries`);
const file = sessionManager.getSessionFile();
if (file) console.log(`session file: ${file}`);
sessionManager.close();
