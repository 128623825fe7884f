/**
 * A native lane as a link of the compaction chain: a Summarizer whose history summary is the
 * provider's own compaction of the span, with bonsai's readable summary always beside it.
 *
 * The provider is sent the request pi-ai builds for the span, exactly as the agent's next request
 * would start (providerBody), so the prefix it has cached is read. Everything the provider does
 * not write comes from `readable`, the next summarizer of the chain: the readable summary when the
 * provider writes none (OpenAI), made at the same time as the native request; a split turn's
 * beginning; the short summary. A `readable` that fails, or whose window the prompt does not fit,
 * is replaced by the extractive summary, which cannot fail.
 */
import type { Api, Context, Model, SimpleStreamOptions } from "@mariozechner/pi-ai";
import { extractiveSummarizer } from "./extractive.js";
import { NativeCompactionError, type NativeLane, type NativeOutcome, type NativePayload, type ProviderBody, roughTokens } from "./native-lane.js";
import type { SummarizeRequest, SummarizeResult, Summarizer } from "./types.js";

/** The stream options of the agent's requests that change the body pi-ai builds. */
export type NativeStreamOptions = Pick<SimpleStreamOptions, "reasoning" | "sessionId" | "thinkingBudgets">;

export interface NativeSummarizerOptions {
  lane: NativeLane;
  model: Model<Api>;
  apiKey: string | undefined;
  /** what the agent would send for the span: its system prompt and tools, the span's messages */
  context: Context;
  streamOptions?: NativeStreamOptions;
  /** what the agent's live requests go through (the previous native compaction replayed), so the prefix is theirs */
  rewrite?: (body: ProviderBody) => ProviderBody;
  instructions: string;
  readable: Summarizer;
  fetch?: typeof fetch;
}

export interface NativeSummarizer extends Summarizer {
  readonly lane: NativeLane;
  /** the stored form of the provider's answer, once a history summary went through the lane */
  payload(): NativePayload | undefined;
  /** what the provider billed for it */
  outcome(): NativeOutcome | undefined;
}

/** The request body pi-ai would send for `context`, captured before it leaves (nothing is sent). */
export async function providerBody(model: Model<Api>, context: Context, apiKey: string | undefined, options: NativeStreamOptions = {}): Promise<ProviderBody> {
  const { streamSimple } = await import("@mariozechner/pi-ai");
  let body: ProviderBody | undefined;
  const captured = new Error("request captured");
  const stream = streamSimple(model, context, {
    ...options,
    apiKey: apiKey ?? "",
    onPayload: (payload) => {
      body = payload as ProviderBody;
      throw captured;
    },
  });
  for await (const event of stream) if (event.type === "done" || event.type === "error") break;
  if (!body) throw new NativeCompactionError(`pi-ai built no ${model.api} request for ${model.provider}/${model.id}`);
  return body;
}

/**
 * `summarizer` with its answers kept per request while it succeeds: the native link and the next
 * method share it, so a readable summary made beside a native request that then failed is not
 * asked for again.
 */
export function sharedSummarizer(summarizer: Summarizer): Summarizer {
  const answers = new Map<string, Promise<SummarizeResult>>();
  return {
    name: summarizer.name,
    contextWindow: summarizer.contextWindow,
    reasoning: summarizer.reasoning,
    summarize(request) {
      const key = JSON.stringify([request.purpose, request.systemPrompt, request.prompt, request.maxTokens]);
      const known = answers.get(key);
      if (known) return known;
      const answer = summarizer.summarize(request);
      answers.set(key, answer);
      answer.catch(() => answers.delete(key));
      return answer;
    },
  };
}

export function nativeSummarizer(options: NativeSummarizerOptions): NativeSummarizer {
  const { lane, model } = options;
  let outcome: NativeOutcome | undefined;

  // The companion, or the extractive summary when the companion cannot take the prompt or fails.
  const readable = async (request: SummarizeRequest): Promise<SummarizeResult> => {
    const window = options.readable.contextWindow;
    const fits = window <= 0 || roughTokens(request.systemPrompt + request.prompt) + request.maxTokens <= window;
    if (fits) {
      try {
        return await options.readable.summarize(request);
      } catch (error) {
        if (request.signal?.aborted) throw error;
      }
    }
    return extractiveSummarizer().summarize(request);
  };

  const native = async (signal: AbortSignal | undefined): Promise<NativeOutcome> => {
    const built = await providerBody(model, options.context, options.apiKey, options.streamOptions);
    const body = options.rewrite ? options.rewrite(built) : built;
    return lane.compact({ model, apiKey: options.apiKey, body, instructions: options.instructions, signal, fetch: options.fetch });
  };

  return {
    lane,
    name: `${model.provider}/${model.id} (native ${lane.id})`,
    // never split into chunks: the provider compacts the span in one request
    contextWindow: 0,
    reasoning: false,
    async summarize(request) {
      if (request.purpose !== "history") return readable(request);
      if (lane.writesText) {
        outcome = await native(request.signal);
        return { text: outcome.readable ?? "", model: `${model.provider}/${model.id}` };
      }
      const [made, written] = await Promise.allSettled([native(request.signal), readable(request)]);
      if (made.status === "rejected") throw made.reason;
      if (written.status === "rejected") throw written.reason;
      outcome = made.value;
      return written.value;
    },
    payload: () =>
      outcome && { lane: lane.id, provider: model.provider, model: model.id, api: model.api, route: lane.route, baseUrl: model.baseUrl, data: outcome.data },
    outcome: () => outcome,
  };
}
