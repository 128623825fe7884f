/**
 * The footer line of `bonsai chat`: model, how full the context is, and where the session is. Pure:
 * the numbers in, one line out, fitted to the terminal width.
 */
import { sep } from "node:path";
import { clip } from "../messages/preview.js";

export interface FooterInput {
  /** provider/id */
  model: string;
  /** getContextUsage(): tokens null right after a compaction; undefined when the window is unknown */
  usage: { tokens: number | null; contextWindow: number; percent: number | null } | undefined;
  /** the session file, or a database location (`sqlite:…#ID`, `postgres://…#ID`, no password); undefined when not written anywhere */
  location: string | undefined;
  /** shown as `~` at the start of a session file's path */
  home?: string;
}

/** 950, 1.2k, 12k, 1.5M: short enough for a footer, exact enough to watch a threshold. */
export function formatTokens(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 10_000) return `${(n / 1000).toFixed(1).replace(/\.0$/, "")}k`;
  if (Math.round(n / 1000) < 1000) return `${Math.round(n / 1000)}k`;
  return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, "")}M`;
}

/** "12k/128k tokens (9.4%)"; "?/128k tokens" until the first answer after a compaction. */
export function formatContextUsage(usage: FooterInput["usage"]): string {
  if (!usage) return "context window unknown";
  const window = formatTokens(usage.contextWindow);
  if (usage.tokens === null) return `?/${window} tokens (until the next answer)`;
  const percent = usage.percent ?? (usage.tokens / usage.contextWindow) * 100;
  return `${formatTokens(usage.tokens)}/${window} tokens (${percent.toFixed(1)}%)`;
}

export function displayPath(path: string, home?: string): string {
  if (home && (path === home || path.startsWith(home + sep))) return `~${path.slice(home.length)}`;
  return path;
}

/**
 * `model · usage · session location`. When the line is wider than `width`, the location loses
 * characters from its start first (its useful end is the file name or the `#ID`), then the whole
 * line is cut.
 */
export function formatFooter(input: FooterInput, width = 120): string {
  const head = `${input.model} · ${formatContextUsage(input.usage)}`;
  // a database location never starts with the home directory, so only file paths get the `~`
  const file = input.location ? displayPath(input.location, input.home) : "(not saved)";
  const full = `${head} · ${file}`;
  if (full.length <= width) return full;
  const room = width - head.length - 3;
  if (room >= 12) return `${head} · …${file.slice(file.length - (room - 1))}`;
  return clip(head, width);
}
