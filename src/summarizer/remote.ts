/**
 * Client of the remote summarization protocol: POST `{systemPrompt, prompt, maxTokens?}` as JSON,
 * get `{summary, shortSummary?, model?, usage?}` back. Any server that speaks it works; `bonsai
 * serve` is one. Overload (429/503) is retried after the server's `Retry-After`, a bounded number
 * of times; every attempt has its own timeout; the caller's signal cancels everything.
 */
import type { Usage } from "../format/message-types.js";
import { sleep } from "../util/sleep.js";
import { reasonFromBody } from "./http-reason.js";
import {
  SummarizationAbortedError,
  SummarizerConfigError,
  type SummarizeRequest,
  type SummarizeResult,
  type Summarizer,
} from "./types.js";

export interface RemoteSummarizerOptions {
  url: string;
  /** bearer token; defaults to env BONSAI_SERVER_TOKEN */
  token?: string;
  /** per attempt, in milliseconds (default 120 000) */
  timeoutMs?: number;
  /** retries after 429/503 (default 2) */
  maxRetries?: number;
  /** longest `Retry-After` we wait for; a longer one fails at once (default 30 000 ms) */
  maxRetryWaitMs?: number;
  /** the window of the model behind the endpoint, if known; 0 means unknown */
  contextWindow?: number;
  env?: NodeJS.ProcessEnv;
  fetch?: typeof fetch;
}

export const REMOTE_DEFAULTS = { timeoutMs: 120_000, maxRetries: 2, maxRetryWaitMs: 30_000 } as const;

/** Wait when a 429/503 carries no usable `Retry-After`. */
const FALLBACK_RETRY_MS = 1000;

/** The wire format of the request body. `purpose` is an extension other servers ignore. */
export interface RemoteRequestBody {
  systemPrompt: string;
  prompt: string;
  maxTokens?: number;
  purpose?: SummarizeRequest["purpose"];
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** A URL without its credentials, fit to appear in names and messages. */
export function displayUrl(raw: string): string {
  try {
    const url = new URL(raw);
    url.username = "";
    url.password = "";
    return url.toString();
  } catch {
    return raw;
  }
}

function readUsage(value: unknown): Usage | undefined {
  if (!value || typeof value !== "object") return undefined;
  const u = value as Record<string, unknown>;
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  if (typeof u.input !== "number" && typeof u.output !== "number") return undefined;
  const usage: Usage = {
    input: num(u.input),
    output: num(u.output),
    cacheRead: num(u.cacheRead),
    cacheWrite: num(u.cacheWrite),
    totalTokens: num(u.totalTokens) || num(u.input) + num(u.output),
  };
  return usage;
}

/** The server's one-line reason from an error body (`{error}` or `{message}`), if it sent one. */
async function serverReason(response: Response): Promise<string | undefined> {
  try {
    return reasonFromBody(await response.text());
  } catch {
    return undefined;
  }
}

export function remoteSummarizer(options: RemoteSummarizerOptions): Summarizer {
  const env = options.env ?? process.env;
  let target: URL;
  try {
    target = new URL(options.url);
  } catch {
    throw new SummarizerConfigError(`remote summarizer URL "${displayUrl(options.url)}" is not a URL: write it like http://127.0.0.1:8787/summarize`);
  }
  // fetch refuses URLs with credentials; a password in the URL serves as the bearer token.
  const urlPassword = decodeURIComponent(target.password);
  target.username = "";
  target.password = "";
  const endpoint = target.toString();
  const token = options.token ?? env.BONSAI_SERVER_TOKEN ?? (urlPassword || undefined);
  const timeoutMs = options.timeoutMs ?? REMOTE_DEFAULTS.timeoutMs;
  const maxRetries = options.maxRetries ?? REMOTE_DEFAULTS.maxRetries;
  const maxRetryWaitMs = options.maxRetryWaitMs ?? REMOTE_DEFAULTS.maxRetryWaitMs;
  const doFetch = options.fetch ?? fetch;
  const shownUrl = endpoint;

  async function attempt(body: string, signal: AbortSignal | undefined): Promise<Response> {
    const timeout = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
    if (token) headers.authorization = `Bearer ${token}`;
    try {
      return await doFetch(endpoint, { method: "POST", headers, body, signal: combined });
    } catch (error) {
      if (signal?.aborted) throw new SummarizationAbortedError();
      if (timeout.aborted) {
        throw new Error(`Remote summarization failed: no answer from ${shownUrl} within ${Math.round(timeoutMs / 1000)} s`);
      }
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const detail = cause?.code ?? cause?.message ?? (error as Error).message;
      throw new Error(`Remote summarization failed: cannot reach ${shownUrl} (${detail})`);
    }
  }

  return {
    name: `remote ${shownUrl}`,
    contextWindow: options.contextWindow ?? 0,
    reasoning: false,
    async summarize(request: SummarizeRequest): Promise<SummarizeResult> {
      const { signal } = request;
      if (signal?.aborted) throw new SummarizationAbortedError();
      const wire: RemoteRequestBody = {
        systemPrompt: request.systemPrompt,
        prompt: request.prompt,
        maxTokens: request.maxTokens,
        purpose: request.purpose,
      };
      const body = JSON.stringify(wire);
      for (let retry = 0; ; retry++) {
        const response = await attempt(body, signal);
        if ((response.status === 429 || response.status === 503) && retry < maxRetries) {
          const wait = parseRetryAfter(response.headers.get("retry-after")) ?? FALLBACK_RETRY_MS;
          if (wait <= maxRetryWaitMs) {
            await response.body?.cancel().catch(() => {});
            await sleep(wait, signal, () => new SummarizationAbortedError());
            continue;
          }
        }
        if (!response.ok) {
          const reason = await serverReason(response);
          const status = `${response.status} ${response.statusText}`.trim();
          const after = parseRetryAfter(response.headers.get("retry-after"));
          const retryHint = after !== undefined ? ` (server asks to retry after ${Math.ceil(after / 1000)} s)` : "";
          throw new Error(`Remote summarization failed (${status})${reason ? `: ${reason}` : ""}${retryHint}`);
        }
        let json: unknown;
        try {
          json = await response.json();
        } catch (error) {
          if (signal?.aborted) throw new SummarizationAbortedError();
          throw new Error(`Remote summarization response from ${shownUrl} is not JSON (${(error as Error).message})`);
        }
        const answer = (json ?? {}) as Record<string, unknown>;
        if (typeof answer.summary !== "string") throw new Error("Remote summarization response missing summary");
        const result: SummarizeResult = { text: answer.summary };
        if (typeof answer.shortSummary === "string" && answer.shortSummary.trim()) result.shortSummary = answer.shortSummary;
        if (typeof answer.model === "string") result.model = answer.model;
        const usage = readUsage(answer.usage);
        if (usage) result.usage = usage;
        return result;
      }
    },
  };
}
