/**
 * Anthropic's server-side compaction (the `compact-2026-01-12` beta) as a native lane.
 *
 * Compacting: the request the agent would send for the span (same system prompt, tools and
 * messages, so the provider can read the cached prefix) goes to `/v1/messages` with a
 * `compact_20260112` context-management edit that fires at the provider's floor and pauses right
 * after compacting; the answer's `compaction` block is the payload, and its text the readable
 * summary.
 *
 * Replaying: the block opens an assistant turn in place of the summary message (the API drops
 * whatever came before it), and the request carries a compaction edit whose trigger no request in
 * the window reaches, because the API refuses a replayed block without one.
 */
import type { Api, Model } from "@mariozechner/pi-ai";
import {
  contentText,
  count,
  endpoint,
  NativeCompactionError,
  type NativeLane,
  type NativeOutcome,
  type NativeRequest,
  type NativeUsage,
  postJson,
  type ProviderBody,
  type ReplayContext,
} from "./native-lane.js";

export const ANTHROPIC_COMPACTION_BETA = "compact-2026-01-12";
/** The API refuses a compaction trigger below this many input tokens. */
export const ANTHROPIC_MIN_TRIGGER = 50_000;
const EDIT_TYPE = "compact_20260112";
/** Opens the notes sent after a replayed block: what bonsai's readable summary adds to the provider's. */
export const REPLAY_NOTES_INTRO = "Notes kept beside the compacted history above (exact user requests, pinned messages, files touched):";

interface Message {
  role: string;
  content: unknown;
}

/** The key as pi-ai sends it: OAuth tokens as a bearer, API keys as `x-api-key`. */
function authHeaders(apiKey: string | undefined): Record<string, string> {
  if (!apiKey) return {};
  return apiKey.includes("sk-ant-oat") ? { authorization: `Bearer ${apiKey}` } : { "x-api-key": apiKey };
}

/** `body` with `edit` added to its context-management edits (any compaction edit already there replaced). */
function withEdit(body: ProviderBody, edit: Record<string, unknown>): ProviderBody {
  const current = (body.context_management as { edits?: { type?: string }[] } | undefined)?.edits ?? [];
  return { ...body, context_management: { edits: [...current.filter((e) => e.type !== EDIT_TYPE), edit] } };
}

/** The counts of the compaction iteration when the answer lists iterations (the top level leaves it out). */
function usageOf(answer: Record<string, unknown>): NativeUsage {
  const usage = (answer.usage ?? {}) as Record<string, unknown>;
  const iterations = Array.isArray(usage.iterations) ? (usage.iterations as Record<string, unknown>[]) : [];
  const source = iterations.find((i) => i?.type === "compaction") ?? usage;
  return {
    input: count(source.input_tokens),
    output: count(source.output_tokens),
    cacheRead: count(source.cache_read_input_tokens),
    cacheWrite: count(source.cache_creation_input_tokens),
  };
}

/** The betas pi-ai 0.73.1 sends on its own (providers/anthropic.js createClient); a header we set replaces them. */
function piAiBetas(model: Model<Api>, hasTools: boolean): string[] {
  const compat = (model as { compat?: { supportsEagerToolInputStreaming?: boolean } }).compat;
  const betas: string[] = [];
  if (hasTools && compat?.supportsEagerToolInputStreaming === false) betas.push("fine-grained-tool-streaming-2025-05-14");
  if (!/(opus|sonnet)-4[.-][67]/.test(model.id)) betas.push("interleaved-thinking-2025-05-14");
  return betas;
}

export const anthropicLane: NativeLane = {
  id: "anthropic",
  route: `messages context_management ${EDIT_TYPE}`,
  writesText: true,
  minTokens: ANTHROPIC_MIN_TRIGGER,
  refusal: /compaction|context_management|compact[-_]20260112/i,

  async compact(request: NativeRequest): Promise<NativeOutcome> {
    const { model, body } = request;
    const edit = { type: EDIT_TYPE, trigger: { type: "input_tokens", value: ANTHROPIC_MIN_TRIGGER }, pause_after_compaction: true, instructions: request.instructions };
    const answer = await postJson(
      endpoint(model.baseUrl, "v1/messages"),
      { "anthropic-version": "2023-06-01", "anthropic-beta": ANTHROPIC_COMPACTION_BETA, ...authHeaders(request.apiKey), ...model.headers },
      withEdit({ ...body, stream: false }, edit),
      request,
    );
    const blocks = Array.isArray(answer.content) ? (answer.content as Record<string, unknown>[]) : [];
    const block = blocks.find((b) => b?.type === "compaction");
    if (!block) {
      throw new NativeCompactionError(`${model.provider}/${model.id} answered without compacting (stop_reason ${String(answer.stop_reason)}): the request was under its trigger, or the model does not compact`);
    }
    const readable = typeof block.content === "string" ? block.content.trim() : "";
    if (!readable) throw new NativeCompactionError(`${model.provider}/${model.id} returned a compaction without a summary`);
    return { data: block, readable, usage: usageOf(answer) };
  },

  replay(body, stored, isSummary, model, notes) {
    const messages = Array.isArray(body.messages) ? (body.messages as Message[]) : [];
    const at = messages.findIndex((m) => m.role === "user" && isSummary(contentText(m.content)));
    if (at < 0) return undefined;
    let rest = messages.slice(at + 1);
    let opening: Message = { role: "assistant", content: [stored.data] };
    // The block opens the assistant turn; a kept turn that starts with the assistant continues it.
    if (!notes && rest[0]?.role === "assistant") {
      const next = rest[0].content;
      opening = { role: "assistant", content: [stored.data, ...(typeof next === "string" ? [{ type: "text", text: next }] : (next as unknown[]))] };
      rest = rest.slice(1);
    }
    const kept = notes ? [{ role: "user", content: [{ type: "text", text: `${REPLAY_NOTES_INTRO}\n\n${notes}` }] }] : [];
    const edit = { type: EDIT_TYPE, trigger: { type: "input_tokens", value: Math.max(ANTHROPIC_MIN_TRIGGER, model.contextWindow ?? 0) } };
    const current = (body.context_management as { edits?: { type?: string }[] } | undefined)?.edits ?? [];
    return { ...(current.some((e) => e.type === EDIT_TYPE) ? body : withEdit(body, edit)), messages: [...messages.slice(0, at), opening, ...kept, ...rest] };
  },

  providerText: (data) => (typeof (data as { content?: unknown })?.content === "string" ? (data as { content: string }).content : undefined),

  replayHeaders({ model, hasTools, headers }: ReplayContext) {
    const given = headers?.["anthropic-beta"]?.split(",").map((b) => b.trim()).filter(Boolean);
    const betas = new Set([...(given ?? piAiBetas(model, hasTools)), ANTHROPIC_COMPACTION_BETA]);
    return { "anthropic-beta": [...betas].join(",") };
  },
};
