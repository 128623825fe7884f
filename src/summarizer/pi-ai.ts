/**
 * A Summarizer over a pi-ai model: one `completeSimple` call per summary. pi-ai is imported
 * lazily inside functions, so CLI commands that never summarize do not pay its ~0.8 s import.
 */
import type { Api, AssistantMessage, Model } from "@mariozechner/pi-ai";
import { joinTextBlocks } from "../messages/text-blocks.js";
import {
  SummarizationAbortedError,
  SummarizerConfigError,
  type SummarizeRequest,
  type SummarizeResult,
  type Summarizer,
} from "./types.js";

export interface PiAiSummarizerOptions {
  /** the provider's API key; without one pi-ai falls back to its own lookup */
  apiKey?: string;
  /** client-side retries inside the provider SDK (pi-ai's default when unset) */
  maxRetries?: number;
  /** HTTP timeout of one call, in milliseconds */
  timeoutMs?: number;
}

/** A provider call that failed; `contextOverflow` tells a caller that a larger window may succeed. */
export class ModelCallError extends Error {
  constructor(
    message: string,
    readonly contextOverflow: boolean,
  ) {
    super(message);
    this.name = "ModelCallError";
  }
}

const loadPiAi = () => import("@mariozechner/pi-ai");

/** The text of a response: text blocks joined by newlines; thinking is dropped. */
export function responseText(message: Pick<AssistantMessage, "content">): string {
  return joinTextBlocks(message.content, "\n");
}

export function piAiSummarizer(model: Model<Api>, options: PiAiSummarizerOptions = {}): Summarizer {
  return {
    name: `${model.provider}/${model.id}`,
    contextWindow: model.contextWindow,
    reasoning: model.reasoning,
    async summarize(request: SummarizeRequest): Promise<SummarizeResult> {
      const { signal } = request;
      if (signal?.aborted) throw new SummarizationAbortedError();
      const { completeSimple, isContextOverflow } = await loadPiAi();
      // A model's own output cap wins: asking for more is a 400 on most providers.
      const maxTokens = model.maxTokens > 0 ? Math.min(request.maxTokens, model.maxTokens) : request.maxTokens;
      const response = await completeSimple(
        model,
        {
          systemPrompt: request.systemPrompt,
          messages: [{ role: "user", content: request.prompt, timestamp: Date.now() }],
        },
        {
          maxTokens,
          signal,
          apiKey: options.apiKey,
          ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
          ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
          // Non-reasoning models reject or misread reasoning options (docs/ARCHITECTURE.md, decision 7).
          ...(model.reasoning && request.reasoning ? { reasoning: request.reasoning } : {}),
          ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
        },
      );
      if (response.stopReason === "aborted" || signal?.aborted) throw new SummarizationAbortedError();
      if (response.stopReason === "error") {
        const reason = response.errorMessage || "the provider returned an error without a message";
        throw new ModelCallError(`${model.provider}/${model.id}: ${reason}`, isContextOverflow(response, model.contextWindow));
      }
      return {
        text: responseText(response),
        model: `${model.provider}/${model.id}`,
        usage: response.usage,
      };
    },
  };
}

/** The usual environment variables of common providers, to name the missing one in errors. */
const KEY_HINTS: Record<string, string> = {
  anthropic: "ANTHROPIC_API_KEY",
  openai: "OPENAI_API_KEY",
  google: "GEMINI_API_KEY",
  groq: "GROQ_API_KEY",
  openrouter: "OPENROUTER_API_KEY",
  mistral: "MISTRAL_API_KEY",
  xai: "XAI_API_KEY",
  deepseek: "DEEPSEEK_API_KEY",
  cerebras: "CEREBRAS_API_KEY",
};

/** pi-ai's marker for ambient credentials (AWS profiles, Google ADC): no key to send. */
const AMBIENT_CREDENTIALS = "<authenticated>";

export interface ResolvedModel {
  model: Model<Api>;
  apiKey: string | undefined;
}

/**
 * `provider/id` (the id may itself contain slashes, as OpenRouter's do) to a pi-ai model and
 * its API key from the provider's environment variable, unless `apiKey` is given.
 */
export async function resolveModelSpec(spec: string, apiKey?: string): Promise<ResolvedModel> {
  const slash = spec.indexOf("/");
  if (slash <= 0 || slash === spec.length - 1) {
    throw new SummarizerConfigError(`--model "${spec}" is not provider/id: write it like anthropic/claude-sonnet-4-5`);
  }
  const provider = spec.slice(0, slash);
  const id = spec.slice(slash + 1);
  const { getModel, getModels, getProviders, getEnvApiKey, findEnvKeys } = await loadPiAi();
  const providers: string[] = getProviders();
  if (!providers.includes(provider)) {
    throw new SummarizerConfigError(`unknown provider "${provider}" in --model ${spec}: known providers are ${providers.join(", ")}`);
  }
  const model = (getModel as (p: string, i: string) => Model<Api> | undefined)(provider, id);
  if (!model) {
    const ids = (getModels as (p: string) => Model<Api>[])(provider).map((m) => m.id);
    const close = ids.filter((candidate) => candidate.includes(id) || id.includes(candidate)).slice(0, 5);
    const hint = close.length > 0 ? `did you mean ${close.join(", ")}?` : `${ids.length} models are known, e.g. ${ids.slice(0, 5).join(", ")}`;
    throw new SummarizerConfigError(`unknown model "${id}" for provider ${provider}: ${hint}`);
  }
  if (apiKey) return { model, apiKey };
  const found = getEnvApiKey(provider);
  if (found === AMBIENT_CREDENTIALS) return { model, apiKey: undefined };
  if (!found) {
    const variable = findEnvKeys(provider)?.[0] ?? KEY_HINTS[provider] ?? `${provider.toUpperCase().replace(/-/g, "_")}_API_KEY`;
    throw new SummarizerConfigError(`no API key for ${provider}: set ${variable} in the environment or pass --api-key`);
  }
  return { model, apiKey: found };
}

export const DEFAULT_OPENAI_COMPATIBLE_CONTEXT_WINDOW = 128_000;

/** The protocols a `--base-url` server may speak (`--api`); chat completions unless said otherwise. */
export const BASE_URL_APIS = ["openai-completions", "openai-responses", "anthropic-messages"] as const;
export type BaseUrlApi = (typeof BASE_URL_APIS)[number];

/** The provider a `--base-url` model is recorded under: its API's own, so its key variable and native lane apply. */
const BASE_URL_PROVIDERS: Record<BaseUrlApi, string> = {
  "openai-completions": "openai-compatible",
  "openai-responses": "openai",
  "anthropic-messages": "anthropic",
};

/** `--api`'s value checked, or a one-line error naming the choices. */
export function baseUrlApi(value: string | undefined): BaseUrlApi {
  if (value === undefined) return "openai-completions";
  if ((BASE_URL_APIS as readonly string[]).includes(value)) return value as BaseUrlApi;
  throw new SummarizerConfigError(`--api "${value}" is not one of ${BASE_URL_APIS.join(", ")}`);
}

export interface OpenAiCompatibleOptions {
  /** e.g. http://127.0.0.1:11434/v1 (Ollama) or http://127.0.0.1:8080/v1 (llama.cpp) */
  baseUrl: string;
  /** the server's model name; local servers with one loaded model accept anything */
  modelId?: string;
  contextWindow?: number;
  maxTokens?: number;
  reasoning?: boolean;
  /** the protocol the server speaks (default chat completions); a gateway to Anthropic or OpenAI's Responses API names its own */
  api?: BaseUrlApi;
}

/**
 * A pi-ai model for a server at a base URL: any OpenAI-compatible chat-completions server (Ollama,
 * llama.cpp, vLLM), or with `api` a gateway or proxy speaking Anthropic's Messages API or OpenAI's
 * Responses API.
 */
export function openAiCompatibleModel(options: OpenAiCompatibleOptions): Model<Api> {
  let url: URL;
  try {
    url = new URL(options.baseUrl);
  } catch {
    throw new SummarizerConfigError(`--base-url "${options.baseUrl}" is not a URL: write it like http://127.0.0.1:11434/v1`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new SummarizerConfigError(`--base-url "${options.baseUrl}" must be http or https`);
  }
  const contextWindow = options.contextWindow ?? DEFAULT_OPENAI_COMPATIBLE_CONTEXT_WINDOW;
  const id = options.modelId ?? "default";
  const api = options.api ?? "openai-completions";
  const model: Model<Api> = {
    id,
    name: id,
    api,
    provider: BASE_URL_PROVIDERS[api],
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    reasoning: options.reasoning ?? false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow,
    maxTokens: options.maxTokens ?? Math.min(32_768, Math.max(1024, Math.floor(contextWindow / 4))),
  };
  // Local servers know neither `store` nor the developer role, and read `max_tokens`.
  return api === "openai-completions" ? { ...model, compat: { supportsStore: false, supportsDeveloperRole: false, maxTokensField: "max_tokens" } } as Model<Api> : model;
}

/** The key for a base-URL server: given, else its API's usual variable; local servers ignore it, but pi-ai refuses to send a request without one. */
export function openAiCompatibleApiKey(apiKey?: string, env: NodeJS.ProcessEnv = process.env, api: BaseUrlApi = "openai-completions"): string {
  return apiKey || (api === "anthropic-messages" ? env.ANTHROPIC_API_KEY : env.OPENAI_API_KEY) || "bonsai";
}
