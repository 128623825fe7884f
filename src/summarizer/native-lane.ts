/**
 * A native lane: compaction done by the model's provider itself (Anthropic's server-side
 * compaction, OpenAI's Responses compaction) instead of a summary bonsai asks for. Each provider
 * is one module implementing `NativeLane`, registered in native-lanes.ts by the pi-ai API it
 * speaks; nothing else asks which provider it is.
 *
 * What a lane returns is opaque to everyone but that provider: it is stored in the compaction
 * entry's `preserveData.native` with the provider, model, API and route that made it, and replayed
 * only to that same model. Every other reader (another model, pi, oh-my-pi, the viewer) reads the
 * entry's readable `summary`, which is always written beside it (docs/ARCHITECTURE.md, decision 14).
 */
import type { Api, Model } from "@mariozechner/pi-ai";
import { formatCount } from "../util/count.js";
import { reasonFromBody } from "./http-reason.js";

/** Token counts of one compaction request, as the provider billed them. */
export interface NativeUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** What a lane got back from the provider. */
export interface NativeOutcome {
  /** the provider's opaque state, replayed verbatim to the same model */
  data: unknown;
  /** the provider's own readable text, when it writes one (Anthropic does, OpenAI does not) */
  readable?: string;
  usage: NativeUsage;
}

/** `preserveData.native` of a compaction entry made by a lane. */
export interface NativePayload {
  lane: string;
  provider: string;
  model: string;
  api: string;
  /** how the provider was asked ("messages context_management compact_20260112", "responses/compact") */
  route: string;
  /** the endpoint that made it: a payload goes back only to the same one */
  baseUrl?: string;
  data: unknown;
}

/** A provider request body as pi-ai builds it (the live request's own shape). */
export type ProviderBody = Record<string, unknown>;

export interface NativeRequest {
  model: Model<Api>;
  apiKey: string | undefined;
  /** the request the agent would send for the span being compacted, built by pi-ai */
  body: ProviderBody;
  /** what the provider is asked to write (bonsai's sections, and the user's focus) */
  instructions: string;
  signal?: AbortSignal;
  fetch?: typeof fetch;
}

export interface NativeLane {
  /** recorded in `preserveData.native.lane` */
  readonly id: string;
  readonly route: string;
  /** the fewest estimated tokens a span must have (Anthropic refuses a trigger under 50,000) */
  readonly minTokens: number;
  /**
   * Whether the lane may be tried for this model: the provider's own endpoint or a base URL the
   * user named for that API, and a model the provider compacts. Third-party providers of the same
   * API (gateways in pi-ai's registry) are left out: one that ignores the request would answer
   * the whole span as a prompt, and bill it.
   */
  serves(model: Model<Api>): boolean;
  /** the provider writes readable text with its payload; when it does not, bonsai's summary is made beside it */
  readonly writesText: boolean;
  compact(request: NativeRequest): Promise<NativeOutcome>;
  /**
   * The live request `body` with the message carrying the readable summary (the first user
   * message whose text `isSummary` accepts) replaced by the stored payload, followed by `notes`
   * when there are any; undefined when no message is the summary, so the request goes out as it
   * was, with the readable summary.
   */
  replay(body: ProviderBody, stored: NativePayload, isSummary: (text: string) => boolean, model: Model<Api>, notes: string): ProviderBody | undefined;
  /**
   * The provider's readable text inside a payload. The readable summary starts with it, and what
   * bonsai wrote after it (verbatim requests, pins, a split turn's beginning, file lists) is sent
   * as notes beside a replayed payload. Undefined: the payload keeps the user's messages itself
   * (OpenAI's compacted window), and no notes are needed.
   */
  providerText?(data: unknown): string | undefined;
  /** the tokens a replay of the payload puts in a request, when they are not the readable summary's */
  replayedTokens?(outcome: NativeOutcome): number;
  /** what the provider's error says when it refuses a replayed payload (the request is then sent with the readable summary) */
  readonly refusal: RegExp;
  /** headers a request replaying a payload needs on top of the ones pi-ai sends (Anthropic's compaction beta) */
  replayHeaders?(context: ReplayContext): Record<string, string>;
}

/** What a replay's headers depend on besides the model. */
export interface ReplayContext {
  model: Model<Api>;
  /** the request carries tools (pi-ai then asks Anthropic for a tool-streaming beta on some models) */
  hasTools: boolean;
  /** headers the caller already sends */
  headers?: Record<string, string>;
  /** the key the request is sent with (an Anthropic OAuth token needs betas of its own) */
  apiKey?: string;
}

/** A native failure: the provider answered, but not with a compaction. Never retried. */
export class NativeCompactionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NativeCompactionError";
  }
}

/** Whether `stored` was made by `model`, the only model it may be replayed to. */
export function replaysTo(stored: NativePayload, model: Model<Api>): boolean {
  const sameEndpoint = stored.baseUrl === undefined || bare(stored.baseUrl) === bare(model.baseUrl);
  return stored.provider === model.provider && stored.model === model.id && stored.api === model.api && sameEndpoint;
}

/**
 * The notes a replay of `stored` sends beside the payload: what the readable summary says after
 * the provider's own text. Undefined when the readable summary does not start with that text (it
 * was changed after the provider wrote it), so the payload is not replayed at all.
 */
export function replayNotes(lane: Pick<NativeLane, "providerText">, stored: NativePayload, summary: string): string | undefined {
  if (!lane.providerText) return "";
  const text = lane.providerText(stored.data)?.trim();
  if (!text || !summary.startsWith(text)) return undefined;
  return summary.slice(text.length).trim();
}

/** `preserveData.native` when it has the shape a lane wrote, else undefined. */
export function nativePayloadOf(preserveData: Record<string, unknown> | undefined): NativePayload | undefined {
  const native = preserveData?.native as Partial<NativePayload> | undefined;
  if (!native || typeof native !== "object") return undefined;
  const strings = [native.lane, native.provider, native.model, native.api, native.route];
  return strings.every((s) => typeof s === "string") && native.data !== undefined ? (native as NativePayload) : undefined;
}

/** The text of a provider message's content: a string, or the `text` of its blocks. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((block) => (typeof (block as { text?: unknown })?.text === "string" ? (block as { text: string }).text : "")).join("");
}

/** A URL without its trailing slashes, so that two spellings of one endpoint compare equal. */
const bare = (url: string) => url.replace(/\/+$/, "");

/** Joins a base URL and a path without doubling or dropping the slash between them. */
export function endpoint(baseUrl: string, path: string): string {
  return `${bare(baseUrl)}/${path.replace(/^\/+/, "")}`;
}

/** A rough token count (4 characters a token), enough to size a prompt or a replayed window. */
export const roughTokens = (text: string): number => Math.ceil(text.length / 4);

/** How long a compaction request may take: a provider summarizing a long span answers slowly, but not never. */
export const NATIVE_TIMEOUT_MS = 600_000;

/** POSTs JSON and returns the parsed answer; an HTTP error or a body that is not JSON throws, naming the endpoint. */
export async function postJson(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  options: { signal?: AbortSignal; fetch?: typeof fetch },
): Promise<Record<string, unknown>> {
  const timeout = AbortSignal.timeout(NATIVE_TIMEOUT_MS);
  const response = await (options.fetch ?? fetch)(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${reasonFromBody(text) ?? text.slice(0, 300)}`);
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new NativeCompactionError(`${url} answered with a body that is not JSON`);
  }
}

/** A non-negative count from a usage field, 0 when absent. */
export const count = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0);

/** `details.native` of a compaction entry a lane made. */
export interface NativeCompactionDetails {
  lane: string;
  route: string;
  provider: string;
  model: string;
  /** what the provider billed for the compaction request */
  usage: NativeUsage;
  /** the share of the request's input read from the provider's prompt cache, 0 to 1 */
  cacheReadShare: number;
  /** tokens the compaction took out of the context: what it replaced, less the readable summary */
  tokensShed: number;
  /** tokens it cost to write: the provider's output and the cache it wrote */
  tokensWritten: number;
  /** tokensShed − tokensWritten: below zero, the compaction cost more than it saved */
  netTokens: number;
}

/** A native compaction's figures in one line (agent/native-method.ts `nativeDetails`), as the viewer and the chat show it: what it cost against what it saved. */
export function nativeLine(native: unknown): string | undefined {
  const n = native as Partial<NativeCompactionDetails> | undefined;
  if (!n || typeof n.lane !== "string" || typeof n.cacheReadShare !== "number" || typeof n.tokensShed !== "number" || typeof n.tokensWritten !== "number") return undefined;
  const share = `${Math.round(n.cacheReadShare * 1000) / 10}%`;
  const net = n.tokensShed - n.tokensWritten;
  return `${n.lane}: ${share} of the request read from the provider's cache; ${formatCount(n.tokensShed)} tokens shed, ${formatCount(n.tokensWritten)} written (net ${net < 0 ? "−" : ""}${formatCount(Math.abs(net))})`;
}
