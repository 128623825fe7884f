/**
 * A Summarizer for tests: records every request and answers with a scripted function, so tests
 * see exactly what compaction asks for (prompts, budgets, purposes) and control what comes back.
 */
import type { SummarizeRequest, SummarizeResult, Summarizer } from "../../src/summarizer/types.js";
import { SummarizationAbortedError } from "../../src/summarizer/types.js";

export interface FakeSummarizer extends Summarizer {
  requests: SummarizeRequest[];
}

export type Answer = (request: SummarizeRequest, n: number) => SummarizeResult | string | Promise<SummarizeResult | string>;

export function fakeSummarizer(
  answer: Answer = (r) => `SUMMARY(${r.purpose})`,
  options: { contextWindow?: number; reasoning?: boolean; name?: string } = {},
): FakeSummarizer {
  const requests: SummarizeRequest[] = [];
  return {
    name: options.name ?? "fake",
    contextWindow: options.contextWindow ?? 0,
    reasoning: options.reasoning ?? false,
    requests,
    async summarize(request) {
      requests.push(request);
      if (request.signal?.aborted) throw new SummarizationAbortedError();
      const result = await answer(request, requests.length - 1);
      return typeof result === "string" ? { text: result } : result;
    },
  };
}

/** An answer that waits until the request's signal aborts, then rejects like a real summarizer. */
export const hangUntilAborted = (request: SummarizeRequest): Promise<string> =>
  new Promise((_, reject) => {
    request.signal?.addEventListener("abort", () => reject(new SummarizationAbortedError()), { once: true });
  });
