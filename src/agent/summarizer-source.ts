/**
 * Where AgentSession's summaries come from: the methods of `compaction.methods` in order
 * (docs/ARCHITECTURE.md, decision 11). "remote" is the endpoint of the settings (only when one is
 * set); "model" is the candidate models (`compaction.model`, the current model, then
 * `compaction.models`, minus models too small for the input), each through pi-ai; "extractive"
 * is the offline summary that cannot fail. An injected summarizer stands in for remote and model.
 * Prompts for a model or an endpoint leave the machine, so they are redacted first
 * (summarizer/redact.ts); an injected summarizer is the caller's to wrap.
 */
import type { Api, Model } from "@mariozechner/pi-ai";
import type { CompactionResult } from "../compaction/compact.js";
import type { CompactionMethod } from "../config/settings.js";
import type { NativeCompactionDetails } from "../summarizer/native-lane.js";
import { laneFor } from "../summarizer/native-lanes.js";
import { sharedSummarizer } from "../summarizer/native-summarizer.js";
import { withRedaction } from "../summarizer/redact.js";
import type { Summarizer } from "../summarizer/types.js";
import { errorText } from "../util/error-text.js";
import { selectCandidates } from "./candidates.js";
import { isRetryableText } from "./retry.js";
import { type AgentRequestShape, type CompactionSpan, nativeDetails, nativeLink } from "./native-method.js";

/** A summarizer and the method it belongs to (recorded as the compaction's `details.method`). */
export interface MethodSummarizer {
  method: CompactionMethod;
  summarizer: Summarizer;
  /** false: a failure goes to the next method at once, and is reported through `onFailure` */
  retry?: false;
  onFailure?: (error: unknown) => void;
  /** what the method stores beside the summary (a native lane's payload and figures) */
  extras?: (result: CompactionResult, replacedTokens: number) => { preserveData?: Record<string, unknown>; native?: NativeCompactionDetails };
}

export interface SummarizerSourceOptions {
  /** always this one (tests, offline use) */
  summarizer?: Summarizer;
  /** `compaction.remoteEndpoint` */
  remoteEndpoint?: string;
  /** `compaction.models` */
  models: readonly string[];
  /** `compaction.model`, tried before the current model */
  model?: string;
  /** `compaction.methods` */
  methods: readonly CompactionMethod[];
  getApiKey?: (provider: string) => string | undefined | Promise<string | undefined>;
  createSummarizer?: (model: Model<Api>, apiKey: string | undefined) => Summarizer | Promise<Summarizer>;
  resolveModel: (provider: string, id: string) => Model<Api> | undefined;
  onSkip: (message: string) => void;
  /** the agent's system prompt and tools, which a native lane sends with the span */
  requestShape?: AgentRequestShape;
  now?: () => number;
}

/** How long a native lane is left out after an error that may pass. */
export const NATIVE_PAUSE_MS = 30 * 60_000;

export class SummarizerSource {
  /**
   * models whose native lane failed (`provider/id`), and until when it is left out: for the rest
   * of the session after a refusal, for a while after an error that may pass (overload, a rate
   * limit, a timeout), so neither costs a failed request every turn
   */
  private readonly nativeFailed = new Map<string, number>();

  constructor(private readonly options: SummarizerSourceOptions) {}

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /**
   * Summarizers to try for a compaction, best first, each with its method. The native method
   * needs the `span` it compacts; without one (and with an injected summarizer, which always
   * summarizes) it is left out.
   */
  async chain(current: Model<Api>, requiredTokens: number, span?: CompactionSpan): Promise<MethodSummarizer[]> {
    const chain: MethodSummarizer[] = [];
    const injected = this.options.summarizer;
    let nativeAt: number | undefined;
    for (const method of this.options.methods) {
      if (method === "native") {
        nativeAt = chain.length;
      } else if (method === "extractive") {
        const { extractiveSummarizer } = await import("../summarizer/extractive.js");
        chain.push({ method, summarizer: extractiveSummarizer() });
      } else if (injected) {
        // it stands in for both remote and model: once, and named "model" when that method is listed
        const as = this.options.methods.includes("model") ? "model" : method;
        if (!chain.some((c) => c.summarizer === injected)) chain.push({ method: as, summarizer: injected });
      } else if (method === "remote") {
        const remote = await this.remote();
        if (remote) chain.push({ method, summarizer: remote });
      } else {
        for (const summarizer of await this.candidates(current, requiredTokens)) chain.push({ method, summarizer });
      }
    }
    if (nativeAt === undefined || !span || injected) return chain;
    // the summary made beside a native request is the next method's own, asked for once
    const next = chain[nativeAt];
    const shared = next && sharedSummarizer(next.summarizer);
    const native = await this.native(current, span, shared);
    if (!native) return chain;
    if (next && shared) chain[nativeAt] = { ...next, summarizer: shared };
    chain.splice(nativeAt, 0, native);
    return chain;
  }

  /** The native link for the current model, when its API has a lane that has not failed and there is enough history to compact. */
  private async native(current: Model<Api>, span: CompactionSpan, next: Summarizer | undefined): Promise<MethodSummarizer | undefined> {
    const lane = laneFor(current);
    const key = `${current.provider}/${current.id}`;
    if (!lane || !this.options.requestShape || (this.nativeFailed.get(key) ?? 0) > this.now() || !span.hasHistory || span.tokens < lane.minTokens) return undefined;
    const { getEnvApiKey } = await import("@mariozechner/pi-ai");
    const apiKey = (await this.options.getApiKey?.(current.provider)) ?? getEnvApiKey(current.provider);
    const { extractiveSummarizer } = await import("../summarizer/extractive.js");
    const summarizer = nativeLink({ lane, model: current, apiKey, span, shape: this.options.requestShape, readable: next ?? extractiveSummarizer() });
    return {
      method: "native",
      summarizer,
      retry: false,
      onFailure: (error) => this.nativeFailed.set(key, isRetryableText(errorText(error)) ? this.now() + NATIVE_PAUSE_MS : Number.POSITIVE_INFINITY),
      extras: (result, replacedTokens) => {
        const payload = summarizer.payload();
        const native = nativeDetails(summarizer, result, replacedTokens);
        return payload && native ? { preserveData: { native: payload }, native } : {};
      },
    };
  }

  /** The candidate models as summarizers, best first. */
  async candidates(current: Model<Api>, requiredTokens: number): Promise<Summarizer[]> {
    const { candidates, skipped } = selectCandidates({
      current,
      preferred: this.options.model,
      configured: this.options.models,
      resolve: (provider, id) =>
        provider === current.provider && id === current.id ? current : this.options.resolveModel(provider, id),
      requiredTokens,
    });
    for (const skip of skipped) this.options.onSkip(`compaction model ${skip.ref} skipped: ${skip.reason}`);
    return Promise.all(candidates.map((model) => this.forModel(model)));
  }

  /** The summarizer for a branch summary. */
  async forBranch(current: Model<Api>): Promise<Summarizer> {
    return (await this.fixed()) ?? this.forModel(current);
  }

  private async forModel(model: Model<Api>): Promise<Summarizer> {
    const apiKey = await this.options.getApiKey?.(model.provider);
    if (this.options.createSummarizer) return withRedaction(await this.options.createSummarizer(model, apiKey));
    const { piAiSummarizer } = await import("../summarizer/pi-ai.js");
    // Retries are ours (with fallback to the next model), so the SDK must not retry as well.
    return withRedaction(piAiSummarizer(model, { apiKey, maxRetries: 0 }));
  }

  private async fixed(): Promise<Summarizer | undefined> {
    return this.options.summarizer ?? this.remote();
  }

  private async remote(): Promise<Summarizer | undefined> {
    if (!this.options.remoteEndpoint) return undefined;
    const { remoteSummarizer } = await import("../summarizer/remote.js");
    return withRedaction(remoteSummarizer({ url: this.options.remoteEndpoint, maxRetries: 0 }));
  }
}
