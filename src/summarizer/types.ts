/**
 * The one thing compaction and branch summaries need from a model: turn a system prompt and a
 * user prompt into text. Implementations: pi-ai models (pi-ai.ts), a remote summarization
 * endpoint (remote.ts), and the offline extractive summarizer (extractive.ts).
 */
import type { Usage } from "../format/message-types.js";

export interface SummarizeRequest {
  systemPrompt: string;
  prompt: string;
  /** upper bound on the answer, in tokens */
  maxTokens: number;
  /** ask reasoning models to think; ignored by models that cannot */
  reasoning?: "minimal" | "low" | "medium" | "high";
  /** sampling temperature where the model takes one (the judge of `bonsai eval`); the provider's default when absent */
  temperature?: number;
  signal?: AbortSignal;
  /**
   * What is being produced, so summarizers that do not use an LLM (extractive) or that route
   * requests (remote: only history and short summaries) can tell the calls apart.
   */
  purpose: "history" | "turn-prefix" | "short" | "branch" | "merge";
}

export interface SummarizeResult {
  text: string;
  /** a remote endpoint may return a short summary along with the summary */
  shortSummary?: string;
  model?: string;
  usage?: Usage;
}

export interface Summarizer {
  /** shown to users ("anthropic/claude-sonnet-4-5", "extractive", "remote https://…") */
  readonly name: string;
  /** the model's context window in tokens; 0 when unknown */
  readonly contextWindow: number;
  /** whether the model can reason (reasoning options are only sent when true) */
  readonly reasoning: boolean;
  summarize(request: SummarizeRequest): Promise<SummarizeResult>;
}

/** Thrown when a summarization was cancelled through its AbortSignal. */
export class SummarizationAbortedError extends Error {
  constructor(message = "Summarization cancelled") {
    super(message);
    this.name = "SummarizationAbortedError";
  }
}

/** A summarizer that cannot be set up as configured (bad model name, missing key, bad URL). */
export class SummarizerConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SummarizerConfigError";
  }
}
