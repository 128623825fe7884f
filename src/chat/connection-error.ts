/**
 * Why a model server could not be reached. The provider SDK turns a failed fetch into
 * "Connection error." and pi-ai keeps only that message, so the chat watches its own fetches and
 * remembers, per server, the cause the network stack gave (refused, no such host, timed out…);
 * the transcript and the retry notices then name the URL and the cause once, instead of repeating
 * "Connection error." at every attempt.
 */

/** The messages a failed connection leaves (the SDK's, undici's, Node's). */
const CONNECTION_MESSAGE = /(^|: )connection error\.?$|fetch failed|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ECONNRESET|socket hang up|UND_ERR_CONNECT/i;

export function isConnectionError(message: string): boolean {
  return CONNECTION_MESSAGE.test(message.trim());
}

const CAUSES: Record<string, string> = {
  ECONNREFUSED: "connection refused (ECONNREFUSED): nothing listens at that address",
  ENOTFOUND: "no such host (ENOTFOUND)",
  EAI_AGAIN: "the host name could not be looked up (EAI_AGAIN)",
  ETIMEDOUT: "timed out (ETIMEDOUT)",
  UND_ERR_CONNECT_TIMEOUT: "timed out connecting (UND_ERR_CONNECT_TIMEOUT)",
  EHOSTUNREACH: "host unreachable (EHOSTUNREACH)",
  ENETUNREACH: "network unreachable (ENETUNREACH)",
  ECONNRESET: "the connection was reset (ECONNRESET)",
  UND_ERR_SOCKET: "the server closed the connection (UND_ERR_SOCKET)",
  CERT_HAS_EXPIRED: "its TLS certificate has expired",
  DEPTH_ZERO_SELF_SIGNED_CERT: "its TLS certificate is self-signed",
};

/** The network cause in an error's `cause` chain, in words; undefined when there is none. */
export function networkCause(error: unknown): string | undefined {
  let innermost: string | undefined;
  for (let current = error, depth = 0; current instanceof Error && depth < 8; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && /^[A-Z_]+$/.test(code)) return CAUSES[code] ?? `${current.message} (${code})`;
    if (depth > 0) innermost = current.message; // undici's own reasons have no code ("bad port")
  }
  return innermost;
}

/** "cannot reach URL: why" */
export function connectionErrorText(url: string, cause: string | undefined): string {
  return `cannot reach ${url}${cause ? `: ${cause}` : ""}`;
}

const originOf = (url: string): string | undefined => {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
};

/** The last fetch failure of each server, from a wrapper around the global fetch. */
export class FetchFailures {
  private readonly causes = new Map<string, string>();
  private latest: { url: string; cause: string } | undefined;

  /** Wraps globalThis.fetch (it only observes); returns what puts the original back. */
  install(): () => void {
    const original = globalThis.fetch;
    const wrapped: typeof fetch = async (input, init) => {
      try {
        const response = await original(input, init);
        const origin = originOf(requestUrl(input));
        if (origin) this.causes.delete(origin);
        return response;
      } catch (error) {
        const origin = originOf(requestUrl(input));
        const cause = networkCause(error);
        if (origin && cause) {
          this.causes.set(origin, cause);
          this.latest = { url: requestUrl(input), cause };
        }
        throw error;
      }
    };
    globalThis.fetch = wrapped;
    return () => {
      if (globalThis.fetch === wrapped) globalThis.fetch = original;
    };
  }

  /** The request that failed last at the network level, and why. */
  last(): { url: string; cause: string } | undefined {
    return this.latest;
  }

  /** Why the last request to the server at `url` failed, if it did at the network level. */
  causeFor(url: string): string | undefined {
    const origin = originOf(url);
    return origin ? this.causes.get(origin) : undefined;
  }
}

function requestUrl(input: string | URL | Request): string {
  if (typeof input === "string") return input;
  if (input instanceof URL) return input.href;
  return input.url;
}
