/**
 * Which summarizer a command uses. Precedence: a remote endpoint, then an OpenAI-compatible
 * server, then a pi-ai model, then the offline extractive summarizer, which is announced so
 * nobody mistakes its output for a model's. Prompts sent off the machine are redacted unless
 * the caller opts out.
 */
import { extractiveSummarizer } from "./extractive.js";
import { withRedaction } from "./redact.js";
import { type Summarizer, SummarizerConfigError } from "./types.js";

export interface SummarizerChoice {
  /** `provider/id`, a pi-ai model; its API key comes from the provider's environment variable */
  model?: string;
  /** an OpenAI-compatible server (Ollama, llama.cpp, vLLM), e.g. http://127.0.0.1:11434/v1 */
  baseUrl?: string;
  /** what `baseUrl` speaks (pi-ai.ts BASE_URL_APIS; default chat completions) */
  api?: string;
  /** the model name to ask the `baseUrl` server for */
  modelId?: string;
  /** overrides the key from the environment */
  apiKey?: string;
  /** the model's window in tokens, when the registry does not know it or is wrong */
  contextWindow?: number;
  /** a summarization endpoint (`bonsai serve` or any server of the protocol) */
  remote?: string;
  /** bearer token for `remote`; defaults to env BONSAI_SERVER_TOKEN */
  remoteToken?: string;
  /** explicitly the offline summarizer, without the notice */
  extractive?: boolean;
  /** mask secrets in prompts sent to a remote or LLM summarizer (default true) */
  redact?: boolean;
  /** hears one-line notices meant for the user (which summarizer, what was ignored) */
  onNotice?: (message: string) => void;
}

export const EXTRACTIVE_NOTICE =
  "no model configured: using the offline extractive summarizer (pass --model provider/id, --base-url URL of an OpenAI-compatible server, or --remote URL of a summarization endpoint for a model-written summary)";

export async function selectSummarizer(choice: SummarizerChoice = {}): Promise<Summarizer> {
  const wrap = (summarizer: Summarizer) => (choice.redact === false ? summarizer : withRedaction(summarizer));
  const configured = [choice.remote && "--remote", choice.baseUrl && "--base-url", choice.model && "--model"].filter(Boolean);
  if (configured.length > 1) choice.onNotice?.(`${configured.join(", ")} given: using ${configured[0]} and ignoring the rest`);

  if (choice.remote) {
    const { remoteSummarizer } = await import("./remote.js");
    return wrap(remoteSummarizer({ url: choice.remote, token: choice.remoteToken, contextWindow: choice.contextWindow }));
  }
  if (choice.baseUrl) {
    const { baseUrlApi, openAiCompatibleModel, openAiCompatibleApiKey, piAiSummarizer } = await import("./pi-ai.js");
    const api = baseUrlApi(choice.api);
    const model = openAiCompatibleModel({ baseUrl: choice.baseUrl, modelId: choice.modelId, contextWindow: choice.contextWindow, api });
    return wrap(piAiSummarizer(model, { apiKey: openAiCompatibleApiKey(choice.apiKey, process.env, api) }));
  }
  if (choice.model) {
    const { resolveModelSpec, piAiSummarizer } = await import("./pi-ai.js");
    const { model, apiKey } = await resolveModelSpec(choice.model, choice.apiKey);
    const sized = choice.contextWindow ? { ...model, contextWindow: choice.contextWindow } : model;
    return wrap(piAiSummarizer(sized, { apiKey }));
  }
  if (!choice.extractive) choice.onNotice?.(EXTRACTIVE_NOTICE);
  return extractiveSummarizer();
}

/**
 * A summarizer named in one word, as `bonsai eval --summarizer` takes it: `extractive`,
 * `model:provider/id`, `base-url:URL` (optionally `base-url:URL#model-id`) or `remote:URL`.
 */
export function parseSummarizerSpec(spec: string): SummarizerChoice {
  const text = spec.trim();
  if (text === "extractive") return { extractive: true };
  const colon = text.indexOf(":");
  const kind = colon > 0 ? text.slice(0, colon) : "";
  const value = text.slice(colon + 1).trim();
  if (value) {
    if (kind === "model") return { model: value };
    if (kind === "remote") return { remote: value };
    if (kind === "base-url") {
      const hash = value.lastIndexOf("#");
      return hash > 0 ? { baseUrl: value.slice(0, hash), modelId: value.slice(hash + 1) } : { baseUrl: value };
    }
  }
  throw new SummarizerConfigError(
    `unknown summarizer "${spec}": use extractive, model:provider/id, base-url:URL[#model-id] or remote:URL`,
  );
}
