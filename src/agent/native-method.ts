/**
 * The "native" method of the compaction chain for an AgentSession: the lane of the session's
 * model (summarizer/native-lanes.ts) made into a link of the chain, what a stored native
 * compaction reports in `details.native`, and which compaction of the context a request replays.
 *
 * A link that fails is not retried: the chain goes on to the next method, and the source stops
 * offering that model's lane for the rest of the session (summarizer-source.ts), so a provider
 * that refuses does not cost a failed request every turn.
 */
import type { Api, Context, Model } from "@mariozechner/pi-ai";
import type { CompactionResult } from "../compaction/compact.js";
import { messageTextTokens } from "../compaction/tokens.js";
import type { CompactionEntry } from "../format/entry-types.js";
import type { AgentMessage } from "../format/message-types.js";
import { convertToLlm } from "../messages/convert.js";
import { withoutStrayToolResults } from "../messages/tool-pairing.js";
import { NATIVE_COMPACTION_INSTRUCTIONS } from "../prompts/compaction.js";
import type { SessionManager } from "../session/manager.js";
import { type NativeCompactionDetails, type NativeLane, type NativePayload, nativePayloadOf, type ProviderBody } from "../summarizer/native-lane.js";
import { type NativeStreamOptions, type NativeSummarizer, nativeSummarizer } from "../summarizer/native-summarizer.js";
import type { Summarizer } from "../summarizer/types.js";

/** What the chain is built for: the messages a compaction replaces (the previous summary first). */
export interface CompactionSpan {
  messages: AgentMessage[];
  /** their estimated tokens */
  tokens: number;
  /**
   * whether older history is summarized anew; a compaction that only summarizes a split turn's
   * beginning keeps the previous summary as it was, and leaves the provider nothing to compact
   */
  hasHistory: boolean;
  customInstructions?: string;
}

/** What the agent's own requests are made of besides the messages, so a compaction request matches them. */
export interface AgentRequest {
  systemPrompt: string;
  tools: Context["tools"];
  /** the stream options that shape the body: the reasoning level (a change of thinking invalidates Anthropic's cache) and the session id (OpenAI's cache key) */
  options: NativeStreamOptions;
  /** what every live request's body goes through: the replay of the previous native compaction */
  rewrite?: (body: ProviderBody) => ProviderBody;
}
export type AgentRequestShape = () => AgentRequest;

export interface NativeLinkOptions {
  lane: NativeLane;
  model: Model<Api>;
  apiKey: string | undefined;
  span: CompactionSpan;
  shape: AgentRequestShape;
  readable: Summarizer;
}

/** The lane's summarizer for one compaction of `span`. */
export function nativeLink(options: NativeLinkOptions): NativeSummarizer {
  const { span } = options;
  const focus = span.customInstructions?.trim();
  const { systemPrompt, tools, options: streamOptions, rewrite } = options.shape();
  return nativeSummarizer({
    lane: options.lane,
    model: options.model,
    apiKey: options.apiKey,
    context: { systemPrompt, tools, messages: withoutStrayToolResults(convertToLlm(span.messages)) as Context["messages"] },
    streamOptions,
    ...(rewrite ? { rewrite } : {}),
    instructions: focus ? `${NATIVE_COMPACTION_INSTRUCTIONS}\n\nAdditional focus: ${focus}` : NATIVE_COMPACTION_INSTRUCTIONS,
    readable: options.readable,
  });
}

/**
 * `details.native` of a compaction the lane made: what the provider billed, how much of the input
 * it read from its cache, and the net effect on the context (tokens shed against tokens written).
 */
export function nativeDetails(summarizer: NativeSummarizer, result: CompactionResult, replacedTokens: number): NativeCompactionDetails | undefined {
  const payload = summarizer.payload();
  const outcome = summarizer.outcome();
  if (!payload || !outcome) return undefined;
  const { usage } = outcome;
  const input = usage.input + usage.cacheRead + usage.cacheWrite;
  // what a request to the same model carries instead: the payload as replayed, else the readable summary
  const kept = summarizer.lane.replayedTokens?.(outcome) ?? messageTextTokens(result.summary);
  const tokensShed = Math.max(0, replacedTokens - kept);
  const tokensWritten = usage.output + usage.cacheWrite;
  return {
    lane: payload.lane,
    route: payload.route,
    provider: payload.provider,
    model: payload.model,
    usage,
    cacheReadShare: input > 0 ? Math.round((usage.cacheRead / input) * 1000) / 1000 : 0,
    tokensShed,
    tokensWritten,
    netTokens: tokensShed - tokensWritten,
  };
}

/** The latest compaction of the context at the leaf, with its native payload when it has one. */
export function contextNative(session: SessionManager): { payload: NativePayload; summary: string } | undefined {
  const branch = session.getContextBranch();
  for (let i = branch.length - 1; i >= 0; i--) {
    const entry = branch[i];
    if (entry.type !== "compaction") continue;
    const payload = nativePayloadOf((entry as CompactionEntry).preserveData);
    return payload && { payload, summary: (entry as CompactionEntry).summary };
  }
  return undefined;
}

/**
 * contextNative for the agent's context as it stands, read from the session once per context:
 * a context that does not open with a compaction summary has nothing to replay, and one that
 * does is looked up again only after it was rebuilt (a new summary message object).
 */
export function nativeOfContext(session: SessionManager, messages: () => readonly AgentMessage[]): () => ReturnType<typeof contextNative> {
  const seen = new WeakMap<object, ReturnType<typeof contextNative>>();
  return () => {
    const first = messages()[0];
    if (first?.role !== "compactionSummary") return undefined;
    if (!seen.has(first)) seen.set(first, contextNative(session));
    return seen.get(first);
  };
}
