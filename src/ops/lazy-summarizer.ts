/**
 * The summarizer an operation is given: the summarizer itself, or a function that makes one.
 * The function is called only once the operation knows there is something to summarize, so a
 * dry run or an empty branch never needs a model, its API key or its network.
 */
import type { Summarizer } from "../summarizer/types.js";

export type LazySummarizer = Summarizer | (() => Summarizer | Promise<Summarizer>);

export async function resolveSummarizer(source: LazySummarizer | undefined, purpose: string): Promise<Summarizer> {
  if (source === undefined) throw new Error(`no summarizer for ${purpose}: pass options.summarizer`);
  return typeof source === "function" ? await source() : source;
}
