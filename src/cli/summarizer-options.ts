/**
 * The summarizer options every summarizing command shares (compact, checkout --summarize,
 * serve), and their translation into a SummarizerChoice.
 */
import type { Command } from "commander";
import { positiveInteger } from "./numeric-options.js";
import { type SummarizerChoice, selectSummarizer } from "../summarizer/select.js";
import { type Summarizer, SummarizerConfigError } from "../summarizer/types.js";
import { CliError, warn, watchConnections } from "./output.js";

/** What commander parses from the options below; `redact` is false for --no-redact. */
export type SummarizerOptionValues = Pick<
  SummarizerChoice,
  "model" | "baseUrl" | "api" | "modelId" | "apiKey" | "contextWindow" | "remote" | "redact"
>;

export function addSummarizerOptions(command: Command): Command {
  return command
    .option("--model <provider/id>", "summarize with a pi-ai model, e.g. anthropic/claude-sonnet-4-5 (key from the provider's env var)")
    .option("--base-url <url>", "summarize with an OpenAI-compatible server (Ollama, llama.cpp, vLLM), e.g. http://127.0.0.1:11434/v1")
    .option("--model-id <id>", "model name to request from --base-url")
    .option("--api <api>", "what --base-url speaks: openai-completions (default), openai-responses or anthropic-messages")
    .option("--api-key <key>", "API key for --model or --base-url (default: from the environment)")
    .option("--context-window <n>", "the summarizing model's context window in tokens", positiveInteger)
    .option("--remote <url>", "summarize through a summarization endpoint such as bonsai serve (token: env BONSAI_SERVER_TOKEN)")
    .option("--no-redact", "send prompts without masking API keys, tokens and private keys");
}

export function summarizerChoiceFrom(options: SummarizerOptionValues, onNotice: (message: string) => void = warn): SummarizerChoice {
  return {
    model: options.model,
    baseUrl: options.baseUrl,
    ...(options.api ? { api: options.api } : {}),
    modelId: options.modelId,
    apiKey: options.apiKey,
    contextWindow: options.contextWindow,
    remote: options.remote,
    redact: options.redact !== false,
    onNotice,
  };
}

/** selectSummarizer for a command: configuration mistakes become one-line CLI errors. */
export async function summarizerFromOptions(
  options: SummarizerOptionValues,
  onNotice: (message: string) => void = warn,
): Promise<Summarizer> {
  if (options.baseUrl || options.model || options.remote) watchConnections();
  try {
    return await selectSummarizer(summarizerChoiceFrom(options, onNotice));
  } catch (error) {
    if (error instanceof SummarizerConfigError) throw new CliError(error.message);
    throw error;
  }
}
