/**
 * Where pi-bonsai's summaries come from, as bonsai's AgentSession gets them (src/agent/
 * summarizer-source.ts): the methods of `compaction.methods` in bonsai's settings, in order —
 * the remote endpoint when one is set, then `compaction.model`, pi's current model and
 * `compaction.models` (keys from pi's model registry), then the offline extractive summary,
 * which cannot fail. pi resolves models and keys; bonsai only asks. Prompts that leave the
 * machine (every method but the extractive one) are redacted by the source itself.
 */
import type { Api, Model } from "@mariozechner/pi-ai";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { type MethodSummarizer, SummarizerSource } from "../../../src/agent/summarizer-source.js";
import type { Settings } from "../../../src/config/settings.js";

export type { MethodSummarizer };

export function summarizerSource(settings: Settings, ctx: Pick<ExtensionContext, "modelRegistry">, onSkip: (message: string) => void): SummarizerSource {
  const compaction = settings.compaction;
  return new SummarizerSource({
    ...(compaction.remoteEndpoint ? { remoteEndpoint: compaction.remoteEndpoint } : {}),
    ...(compaction.model ? { model: compaction.model } : {}),
    models: compaction.models,
    methods: compaction.methods,
    getApiKey: (provider) => ctx.modelRegistry.getApiKeyForProvider(provider),
    resolveModel: (provider, id) => ctx.modelRegistry.find(provider, id) as Model<Api> | undefined,
    onSkip,
  });
}

