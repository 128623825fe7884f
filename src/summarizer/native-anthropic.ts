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

/** An Anthropic OAuth token (a Claude subscription), sent as a bearer with betas of its own. */
const isOAuth = (apiKey: string | undefined) => apiKey?.includes("sk-ant-oat") === true;
const OAUTH_BETAS = ["claude-code-20250219", "oauth-2025-04-20"];

/** The key as pi-ai sends it: OAuth tokens as a bearer, API keys as `x-api-key`. */
function authHeaders(apiKey: string | undefined): Record<string, string> {
  if (!apiKey) return {};
  return isOAuth(apiKey) ? { authorization: `Bearer ${apiKey}` } : { "x-api-key": apiKey };
}

const betaList = (value: string | undefined) => value?.split(",").map((b) => b.trim()).filter(Boolean);

/**
 * Whether Anthropic compacts on the server for this model id: Opus and Sonnet from 4.6, Fable and
 * Mythos from 5 (the documented list of the compact-2026-01-12 beta). Dates in ids are no version.
 */
export function anthropicCompacts(id: string): boolean {
  const match = /(opus|sonnet|fable|mythos)-(\d{1,2})(?:[.-](\d{1,2})(?!\d))?/.exec(id);
  if (!match) return false;
  const version = Number(match[2]) + Number(match[3] ?? 0) / 10;
  return match[1] === "opus" || match[1] === "sonnet" ? version >= 4.6 : version >= 5;
}

/** The last message of a compaction request must be the user's: the models that compact refuse a prefilled answer. */
function endingWithUser(messages: Message[]): Message[] {
  if (messages.at(-1)?.role === "user") return messages;
  return [...messages, { role: "user", content: [{ type: "text", text: COMPACTION_TURN }] }];
}
/** The user turn a compaction request ends with when the span ends with an answer. */
export const COMPACTION_TURN = "Checkpoint the work so far.";

/** The context-management edits a request body carries. */
const editsOf = (body: ProviderBody) => (body.context_management as { edits?: { type?: string }[] } | undefined)?.edits ?? [];

/** `body` with `edit` added to its context-management edits (any compaction edit already there replaced). */
function withEdit(body: ProviderBody, edit: Record<string, unknown>): ProviderBody {
  return { ...body, context_management: { edits: [...editsOf(body).filter((e) => e.type !== EDIT_TYPE), edit] } };
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
  // the span is estimated (4 characters a token); the margin keeps it above the floor as the provider counts
  minTokens: 55_000,
  serves: (model) => model.provider === "anthropic" && anthropicCompacts(model.id),
  refusal: /compaction|context_management|compact[-_]2026/i,

  async compact(request: NativeRequest): Promise<NativeOutcome> {
    const { model, body } = request;
    const edit = { type: EDIT_TYPE, trigger: { type: "input_tokens", value: ANTHROPIC_MIN_TRIGGER }, pause_after_compaction: true, instructions: request.instructions };
    const betas = new Set([...(isOAuth(request.apiKey) ? OAUTH_BETAS : []), ...(betaList(model.headers?.["anthropic-beta"]) ?? []), ANTHROPIC_COMPACTION_BETA]);
    const messages = endingWithUser(Array.isArray(body.messages) ? (body.messages as Message[]) : []);
    const answer = await postJson(
      endpoint(model.baseUrl, "v1/messages"),
      { "anthropic-version": "2023-06-01", ...authHeaders(request.apiKey), ...model.headers, "anthropic-beta": [...betas].join(",") },
      withEdit({ ...body, messages, stream: false }, edit),
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
    return { ...(editsOf(body).some((e) => e.type === EDIT_TYPE) ? body : withEdit(body, edit)), messages: [...messages.slice(0, at), opening, ...kept, ...rest] };
  },

  providerText: (data) => (typeof (data as { content?: unknown })?.content === "string" ? (data as { content: string }).content : undefined),

  // pi-ai lets the caller's headers, then the model's, replace its own betas: the list is rebuilt the same way, with the compaction beta added
  replayHeaders({ model, hasTools, headers, apiKey }: ReplayContext) {
    const own = [...(isOAuth(apiKey) ? OAUTH_BETAS : []), ...piAiBetas(model, hasTools)];
    const given = betaList(headers?.["anthropic-beta"]) ?? betaList(model.headers?.["anthropic-beta"]) ?? own;
    return { "anthropic-beta": [...new Set([...given, ANTHROPIC_COMPACTION_BETA])].join(",") };
  },
};
