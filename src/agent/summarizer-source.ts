/**
 * Where AgentSession's summaries come from: an injected summarizer, else the remote endpoint of
 * the settings, else the candidate models (docs/ARCHITECTURE.md, decision 11: the current model
 * first, then `compaction.models`, minus models too small for the input), each through pi-ai.
 */
import type { Api, Model } from "@mariozechner/pi-ai";
import type { Summarizer } from "../summarizer/types.js";
import { selectCandidates } from "./candidates.js";

export interface SummarizerSourceOptions {
  /** always this one (tests, offline use) */
  summarizer?: Summarizer;
  /** `compaction.remoteEndpoint` */
  remoteEndpoint?: string;
  /** `compaction.models` */
  models: readonly string[];
  getApiKey?: (provider: string) => string | undefined | Promise<string | undefined>;
  createSummarizer?: (model: Model<Api>, apiKey: string | undefined) => Summarizer | Promise<Summarizer>;
  resolveModel: (provider: string, id: string) => Model<Api> | undefined;
  onSkip: (message: string) => void;
}

export class SummarizerSource {
  constructor(private readonly options: SummarizerSourceOptions) {}

  /** Summarizers to try for a compaction, best first. */
  async candidates(current: Model<Api>, requiredTokens: number): Promise<Summarizer[]> {
    const fixed = await this.fixed();
    if (fixed) return [fixed];
    const { candidates, skipped } = selectCandidates({
      current,
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
    if (this.options.createSummarizer) return this.options.createSummarizer(model, apiKey);
    const { piAiSummarizer } = await import("../summarizer/pi-ai.js");
    // Retries are ours (with fallback to the next model), so the SDK must not retry as well.
    return piAiSummarizer(model, { apiKey, maxRetries: 0 });
  }

  private async fixed(): Promise<Summarizer | undefined> {
    if (this.options.summarizer) return this.options.summarizer;
    if (!this.options.remoteEndpoint) return undefined;
    const { remoteSummarizer } = await import("../summarizer/remote.js");
    return remoteSummarizer({ url: this.options.remoteEndpoint, maxRetries: 0 });
  }
}
