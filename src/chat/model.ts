/**
 * The model `bonsai chat` talks to: `--base-url` (any OpenAI-compatible server), `--model
 * provider/id` (pi-ai's registry, key from the provider's environment variable), or the same
 * from the environment (BONSAI_BASE_URL, BONSAI_MODEL). pi-ai loads only when a model is built.
 */
import type { Api, Model } from "@mariozechner/pi-ai";
import { CliError } from "../util/cli-error.js";
import { SummarizerConfigError } from "../summarizer/types.js";

export const NO_MODEL_MESSAGE =
  "no model configured: pass --model provider/id (API key from the provider's env var) or --base-url URL for an OpenAI-compatible server (--api for an Anthropic or OpenAI Responses gateway)";

export interface ChatModelOptions {
  model?: string;
  baseUrl?: string;
  /** the protocol `baseUrl` speaks (summarizer/pi-ai.ts BASE_URL_APIS; default chat completions) */
  api?: string;
  modelId?: string;
  apiKey?: string;
  contextWindow?: number;
}

export type ModelSource =
  | { kind: "base-url"; baseUrl: string; modelId?: string; api?: string; from: "option" | "env" }
  | { kind: "registry"; spec: string; from: "option" | "env" };

/** Where the model comes from: options first (--base-url before --model), then the environment. */
export function chatModelSource(options: ChatModelOptions, env: NodeJS.ProcessEnv = process.env): ModelSource | undefined {
  if (options.baseUrl) return { kind: "base-url", baseUrl: options.baseUrl, modelId: options.modelId, ...(options.api ? { api: options.api } : {}), from: "option" };
  if (options.model) return { kind: "registry", spec: options.model, from: "option" };
  if (env.BONSAI_BASE_URL) {
    const api = options.api ?? env.BONSAI_API;
    return { kind: "base-url", baseUrl: env.BONSAI_BASE_URL, modelId: options.modelId ?? env.BONSAI_MODEL_ID, ...(api ? { api } : {}), from: "env" };
  }
  if (env.BONSAI_MODEL) return { kind: "registry", spec: env.BONSAI_MODEL, from: "env" };
  return undefined;
}

export interface ChatModel {
  model: Model<Api>;
  /** what the agent sends as the key; undefined for ambient credentials */
  apiKey: string | undefined;
}

/** Builds the model, or fails with one line saying how to configure one. */
export async function resolveChatModel(options: ChatModelOptions, env: NodeJS.ProcessEnv = process.env): Promise<ChatModel> {
  const source = chatModelSource(options, env);
  if (!source) throw new CliError(NO_MODEL_MESSAGE);
  const { baseUrlApi, openAiCompatibleApiKey, openAiCompatibleModel, resolveModelSpec } = await import("../summarizer/pi-ai.js");
  try {
    if (source.kind === "base-url") {
      const api = baseUrlApi(source.api);
      const model = openAiCompatibleModel({ baseUrl: source.baseUrl, modelId: source.modelId, contextWindow: options.contextWindow, api });
      return { model, apiKey: openAiCompatibleApiKey(options.apiKey, env, api) };
    }
    const { model, apiKey } = await resolveModelSpec(source.spec, options.apiKey);
    return { model: options.contextWindow ? { ...model, contextWindow: options.contextWindow } : model, apiKey };
  } catch (error) {
    if (error instanceof SummarizerConfigError) {
      const where = source.from === "env" ? (source.kind === "base-url" ? " (from BONSAI_BASE_URL)" : " (from BONSAI_MODEL)") : "";
      throw new CliError(`${error.message}${where}`);
    }
    throw error;
  }
}
