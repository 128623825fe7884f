/**
 * One configuration story for every command (docs/ARCHITECTURE.md, configuration): the settings
 * files (`~/.bonsai/settings.json`, then `<cwd>/.bonsai/settings.json`) and the BONSAI_*
 * environment, with command-line flags winning. `bonsai chat` talks to the model of
 * BONSAI_BASE_URL (an OpenAI-compatible server, model BONSAI_MODEL_ID, or what BONSAI_API says it speaks) or BONSAI_MODEL
 * (`provider/id`); a summarizing command uses, when no flag names a summarizer,
 * `compaction.remoteEndpoint`, then `compaction.model`, then that same model. Pure.
 */
import type { Settings } from "./settings.js";

/** Which summarizer a command uses: at most one of remote, baseUrl (with modelId) and model. */
export interface SummarizerSource {
  remote?: string;
  baseUrl?: string;
  /** what `baseUrl` speaks, when not chat completions */
  api?: string;
  modelId?: string;
  model?: string;
}

/** The chat model the environment names: BONSAI_BASE_URL (with BONSAI_MODEL_ID) before BONSAI_MODEL. */
export function modelFromEnvironment(env: NodeJS.ProcessEnv = process.env): SummarizerSource {
  if (env.BONSAI_BASE_URL) {
    return { baseUrl: env.BONSAI_BASE_URL, ...(env.BONSAI_MODEL_ID ? { modelId: env.BONSAI_MODEL_ID } : {}), ...(env.BONSAI_API ? { api: env.BONSAI_API } : {}) };
  }
  if (env.BONSAI_MODEL) return { model: env.BONSAI_MODEL };
  return {};
}

/** Where a configured summarizer came from, for the notice a command prints. */
export type SummarizerOrigin = "flags" | "compaction.remoteEndpoint" | "compaction.model" | "BONSAI_BASE_URL" | "BONSAI_MODEL" | "none";

/**
 * The summarizer of a command: the flags when any names one (--remote, --base-url, --model),
 * else the settings, else the environment's chat model; `none` leaves the offline default.
 */
export function configuredSummarizer(
  flags: SummarizerSource,
  settings: Pick<Settings, "compaction">,
  env: NodeJS.ProcessEnv = process.env,
): SummarizerSource & { origin: SummarizerOrigin } {
  if (flags.remote || flags.baseUrl || flags.model) return { ...flags, origin: "flags" };
  const { remoteEndpoint, model } = settings.compaction;
  if (remoteEndpoint) return { remote: remoteEndpoint, origin: "compaction.remoteEndpoint" };
  if (model) return { model, origin: "compaction.model" };
  const fromEnv = modelFromEnvironment(env);
  if (fromEnv.baseUrl) {
    const modelId = flags.modelId ?? fromEnv.modelId;
    return { ...fromEnv, ...(modelId ? { modelId } : {}), ...(flags.api ? { api: flags.api } : {}), origin: "BONSAI_BASE_URL" };
  }
  if (fromEnv.model) return { ...fromEnv, origin: "BONSAI_MODEL" };
  return { origin: "none" };
}
