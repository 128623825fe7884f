/**
 * Bearer-token checks for the summarization server. The server sends conversation text to a
 * model on the caller's behalf, so anyone who can reach it can spend the operator's API key:
 * without a token it only listens on loopback.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";

/** Loopback addresses: reachable only from this machine. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127(?:\.\d{1,3}){3}$/.test(h) || /^::ffff:127(?:\.\d{1,3}){3}$/.test(h);
}

/** Refuses a binding that would expose the server to the network without a token. */
export function assertSafeBinding(host: string, token: string | undefined): void {
  if (!token && !isLoopbackHost(host)) {
    throw new Error(
      `refusing to listen on ${host} without a token: anyone on the network could use the summarizer; set BONSAI_SERVER_TOKEN or pass --token-file, or listen on 127.0.0.1`,
    );
  }
}

export interface TokenSource {
  tokenFile?: string;
  env?: NodeJS.ProcessEnv;
}

/** The configured token: the token file's first line wins over env BONSAI_SERVER_TOKEN. */
export function loadServerToken(source: TokenSource = {}): string | undefined {
  if (source.tokenFile) {
    let text: string;
    try {
      text = readFileSync(source.tokenFile, "utf8");
    } catch (error) {
      throw new Error(`cannot read token file ${source.tokenFile}: ${(error as Error).message}`);
    }
    const token = text.split(/\r?\n/)[0].trim();
    if (!token) throw new Error(`token file ${source.tokenFile} is empty: write the token on its first line`);
    return token;
  }
  const fromEnv = (source.env ?? process.env).BONSAI_SERVER_TOKEN?.trim();
  return fromEnv || undefined;
}

const digest = (value: string) => createHash("sha256").update(value).digest();

/**
 * Whether `candidate` is the token. Both sides are hashed first, so the comparison takes the same
 * time whatever the length or content of the guess.
 */
export function tokenMatches(candidate: string, token: string): boolean {
  return timingSafeEqual(digest(candidate), digest(token));
}

/** Whether an Authorization header carries the token. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match !== null && tokenMatches(match[1], token);
}

/**
 * The token a request carries in its path, `/t/TOKEN/summarize` or `/t/TOKEN/`, for clients that
 * cannot send an Authorization header (oh-my-pi's remote compaction client sends none). The
 * trade-off is documented in docs/server.md: a path can end up in proxy logs and shell history.
 * Undefined when the path has no token part.
 */
export function pathToken(url: string): string | undefined {
  const match = /^\/t\/([^/?#]*)/.exec(url);
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return match[1];
  }
}

/**
 * The request's path as logs and error messages may show it: the query and an absolute form's
 * scheme and host left out, and every segment that holds the token masked, however it is spelled
 * (`//t/`, `/T/`, `%74`, dot segments, percent-encoded): a segment after a `t` segment, and with
 * the server's token known, any segment holding it.
 */
export function printablePath(url: string, token?: string): string {
  const path = url.split("?")[0].replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, "");
  const segments = path.split("/");
  return segments
    .map((segment, i) => {
      const plain = decodeSegment(segment);
      const afterT = i > 0 && decodeSegment(segments[i - 1]).toLowerCase() === "t";
      return afterT || (token && (plain.includes(token) || segment.includes(token))) ? "<token>" : segment;
    })
    .join("/");
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
