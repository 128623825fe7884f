/**
 * Summarizing a span that does not fit the summarizer's own context window (docs/ARCHITECTURE.md, decision
 * 10): the serialized conversation is packed into consecutive chunks that fit, each chunk is
 * summarized on its own, and the chunk summaries are merged (in rounds, if even they do not fit).
 * With an unknown window (0) everything goes in one request, as before.
 */
import { truncateMiddle } from "../messages/serialize.js";
import type { SummarizeRequest, SummarizeResult, Summarizer } from "../summarizer/types.js";
import { SummarizationAbortedError } from "../summarizer/types.js";

/** Conservative tokens of prompt text: 3 characters per token (code and non-English text run denser than 4). */
export const estimateTextTokens = (text: string): number => Math.ceil(text.length / 3);

/** Characters that fit in `tokens` under estimateTextTokens. */
const charsFor = (tokens: number): number => Math.max(0, tokens * 3);

/** Smallest chunk worth a request; below it the window is too small to summarize anything. */
const MIN_CHUNK_TOKENS = 256;

export interface ConversationSummaryRequest {
  summarizer: Summarizer;
  systemPrompt: string;
  /** the conversation, one serialized part per message, oldest first */
  parts: readonly string[];
  /** the whole prompt for a conversation text (used when everything fits in one request) */
  buildPrompt: (conversation: string) => string;
  /** the prompt for one chunk of a conversation that had to be split */
  buildChunkPrompt: (conversation: string) => string;
  /** the prompt merging part summaries; `final` is the last round (where a previous summary belongs) */
  buildMergePrompt: (partials: readonly string[], final: boolean) => string;
  maxTokens: number;
  reasoning?: SummarizeRequest["reasoning"];
  signal?: AbortSignal;
  purpose: "history" | "turn-prefix" | "branch";
}

/** Output tokens to ask for: never more than a quarter of a known window, so the input keeps room. */
export function outputBudget(maxTokens: number, contextWindow: number): number {
  return contextWindow > 0 ? Math.max(1, Math.min(maxTokens, Math.floor(contextWindow / 4))) : maxTokens;
}

/** Prompt tokens one request may carry, after the answer, the system prompt and a safety margin. */
export function promptBudget(contextWindow: number, maxTokens: number, systemPrompt: string): number {
  const margin = Math.max(256, Math.floor(contextWindow * 0.05));
  return contextWindow - outputBudget(maxTokens, contextWindow) - estimateTextTokens(systemPrompt) - margin;
}

/**
 * Packs parts into consecutive groups whose joined text stays within `budgetTokens`. A part that
 * alone exceeds the budget keeps its head and tail (marked) so that it fits.
 */
export function packChunks(parts: readonly string[], budgetTokens: number, separator = "\n\n"): string[][] {
  const limit = charsFor(Math.max(MIN_CHUNK_TOKENS, budgetTokens));
  const chunks: string[][] = [];
  let current: string[] = [];
  let size = 0;
  for (const raw of parts) {
    const part = raw.length > limit ? truncateMiddle(raw, Math.max(1, limit - 64)) : raw;
    const added = current.length === 0 ? part.length : separator.length + part.length;
    if (current.length > 0 && size + added > limit) {
      chunks.push(current);
      current = [];
      size = 0;
    }
    size += current.length === 0 ? part.length : separator.length + part.length;
    current.push(part);
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

function checkAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new SummarizationAbortedError();
}

/** Summarizes a conversation in one request when it fits the window, else in chunks merged afterwards. */
export async function summarizeConversation(request: ConversationSummaryRequest): Promise<SummarizeResult> {
  const { summarizer, systemPrompt, signal } = request;
  const window = summarizer.contextWindow;
  const maxTokens = outputBudget(request.maxTokens, window);
  const call = async (prompt: string, purpose: SummarizeRequest["purpose"]): Promise<SummarizeResult> => {
    checkAborted(signal);
    const summarizeRequest: SummarizeRequest = { systemPrompt, prompt, maxTokens, purpose };
    if (request.reasoning) summarizeRequest.reasoning = request.reasoning;
    if (signal) summarizeRequest.signal = signal;
    const result = await summarizer.summarize(summarizeRequest);
    checkAborted(signal);
    return result;
  };

  const conversation = request.parts.join("\n\n");
  const whole = request.buildPrompt(conversation);
  if (window <= 0) return call(whole, request.purpose);
  const budget = promptBudget(window, request.maxTokens, systemPrompt);
  if (estimateTextTokens(whole) <= budget) return call(whole, request.purpose);

  const chunkBudget = budget - estimateTextTokens(request.buildChunkPrompt(""));
  if (chunkBudget < MIN_CHUNK_TOKENS) {
    throw new Error(
      `${summarizer.name}: a context window of ${window} tokens leaves no room for the conversation; choose a summarizer with a larger window`,
    );
  }
  const chunks = packChunks(request.parts, chunkBudget);
  if (chunks.length === 1) {
    // Everything fits once the largest parts are cut down: one ordinary request.
    const single = request.buildPrompt(chunks[0].join("\n\n"));
    if (estimateTextTokens(single) <= budget) return call(single, request.purpose);
  }
  const partials: string[] = [];
  // One chunk at a time: a provider's rate limit is kinder to a sequence than to a burst.
  for (const chunk of chunks) partials.push((await call(request.buildChunkPrompt(chunk.join("\n\n")), request.purpose)).text);
  return { text: await mergePartials(partials, budget, request.buildMergePrompt, (prompt) => call(prompt, "merge")) };
}

/**
 * Merges part summaries into one. When all of them do not fit one request, neighbours are merged
 * in groups first; every round at least halves the count, so this ends.
 */
async function mergePartials(
  partials: readonly string[],
  budget: number,
  buildMergePrompt: ConversationSummaryRequest["buildMergePrompt"],
  merge: (prompt: string) => Promise<SummarizeResult>,
): Promise<string> {
  const finalPrompt = buildMergePrompt(partials, true);
  if (estimateTextTokens(finalPrompt) <= budget) return (await merge(finalPrompt)).text;
  if (partials.length === 1) {
    // The previous summary and this one do not fit together: cut this one down to the room left.
    const room = budget - estimateTextTokens(buildMergePrompt([""], true));
    if (room < MIN_CHUNK_TOKENS) return partials[0];
    return (await merge(buildMergePrompt([truncateMiddle(partials[0], charsFor(room))], true))).text;
  }

  const overhead = estimateTextTokens(buildMergePrompt([], false));
  let groups = packChunks(partials, budget - overhead, "\n\n</partial-summary>\n\n<partial-summary>\n\n");
  if (groups.length >= partials.length) {
    // Each summary fills a request alone: pair them, each cut to half of the room.
    const half = charsFor(Math.floor((budget - overhead) / 2));
    groups = [];
    for (let i = 0; i < partials.length; i += 2) groups.push(partials.slice(i, i + 2).map((p) => truncateMiddle(p, half)));
  }
  const merged: string[] = [];
  for (const group of groups) merged.push(group.length === 1 ? group[0] : (await merge(buildMergePrompt(group, false))).text);
  return mergePartials(merged, budget, buildMergePrompt, merge);
}
