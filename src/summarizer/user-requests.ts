/**
 * The verbatim requests section every compaction summary ends with: the user's requests from the
 * summarized span, quoted word for word, newest first, within a token budget (older ones clipped
 * with a marker). On an iterative update the previous summary's section is read back (by its
 * heading) and merged, so the task and its constraints are never paraphrased away and the
 * section never repeats itself. Pure functions; the token estimate is passed in.
 */
import type { TranscriptPart } from "./extractive-parse.js";
import { isSubstantiveRequest } from "./extractive-facts.js";
import { GUARD_WORDS } from "./guard-language.js";

export const USER_REQUESTS_HEADING = GUARD_WORDS.en.requests;
export const DEFAULT_USER_REQUESTS_TOKENS = 2000;
const CLIPPED = "[… clipped]";
/** Below this many tokens left, an older request is counted in the marker instead of clipped. */
const MIN_CLIP_TOKENS = 40;

export type EstimateTokens = (text: string) => number;

/** The user's own requests in a transcript, oldest first (commands run, summaries and injected prompts left out). */
export function userRequests(parts: readonly TranscriptPart[]): string[] {
  const out: string[] = [];
  for (const part of parts) {
    if (part.role !== "user") continue;
    const text = part.text.trim();
    if (/<summary>\n/.test(text) || /^Ran (?:`|Python:)/.test(text)) continue;
    if (isSubstantiveRequest(text)) out.push(text);
  }
  return out;
}

const key = (text: string) => text.replace(/\s+/g, " ").replace(CLIPPED, "").trim().toLowerCase();

/** Newest first, each once: the span's requests (oldest first) ahead of the previous section's. */
export function mergeUserRequests(spanRequests: readonly string[], previous: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const request of [...[...spanRequests].reverse(), ...previous]) {
    const k = key(request);
    if (!k || seen.has(k)) continue;
    seen.add(k);
    out.push(request);
  }
  return out;
}

/** Standalone numbers of a request ("module 7", "#12"), not the digits inside a name (`oldName0`). */
const NUMBER = /(?<![\p{L}\p{N}_])\d+(?![\p{L}\p{N}_])/gu;
/** A request with its standalone numbers written as `#`: "check module 7" and "check module 12" say the same. */
const shape = (text: string) => key(text).replace(NUMBER, "#");
/** Fewer repeats than this are not noise: two requests that differ in a number are two tasks. */
const MIN_FOLDED = 3;

/** Earlier requests a kept one stands for: how many, and the numbers they named. */
export interface Folded {
  count: number;
  numbers: string[];
}

/**
 * Requests (newest first) with runs of near-duplicates folded into the newest of them: requests
 * that differ only in standalone numbers ("Also check module number 7", "… number 12"), when at
 * least three say the same. Returns the requests kept and, for each one that stands for earlier
 * ones, how many and the numbers they named, so no task is lost.
 */
export function foldSimilar(requests: readonly string[]): { requests: string[]; similar: Map<string, Folded> } {
  const shapes = requests.map(shape);
  const byShape = new Map<string, string[]>();
  requests.forEach((request, i) => {
    const group = byShape.get(shapes[i]);
    if (group) group.push(request);
    else byShape.set(shapes[i], [request]);
  });
  const similar = new Map<string, Folded>();
  const kept = requests.filter((request, i) => {
    const group = byShape.get(shapes[i]) ?? [request];
    if (group.length < MIN_FOLDED || !shapes[i].includes("#")) return true;
    if (group[0] !== request) return false;
    const numbers = group.slice(1).map((r) => (r.match(NUMBER) ?? []).join("/"));
    similar.set(request, { count: group.length - 1, numbers });
    return true;
  });
  return { requests: kept, similar };
}

/** The line under a kept request that stands for earlier ones. */
function foldedNote(folded: Folded): string {
  const shown = folded.numbers.slice(0, 40).join(", ");
  const more = folded.numbers.length > 40 ? ", …" : "";
  return `_(and ${folded.count} earlier request${folded.count === 1 ? "" : "s"} like it, for ${shown}${more})_`;
}

/** `text` as a Markdown quote, line by line (an empty line a bare `>`). */
export const quote = (text: string) =>
  text
    .split("\n")
    .map((line) => (line.trim() ? `> ${line}` : ">"))
    .join("\n");

export interface RenderedRequests {
  text: string;
  /** requests quoted whole */
  quoted: number;
  /** requests cut short or left out to stay within the budget */
  clipped: number;
}

/** Cuts `text` to about `tokens` tokens at a line or word boundary, marked. */
export function clipTo(text: string, tokens: number, estimate: EstimateTokens): string {
  let low = 0;
  let high = text.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (estimate(text.slice(0, mid)) <= tokens) low = mid;
    else high = mid - 1;
  }
  const cut = text.slice(0, low);
  const space = Math.max(cut.lastIndexOf("\n"), cut.lastIndexOf(" "));
  return `${(space > low * 0.6 ? cut.slice(0, space) : cut).trimEnd()} ${CLIPPED}`;
}

/**
 * The section for `requests` (newest first) within `budget` tokens: newer requests whole, the
 * first one that does not fit clipped (when enough room is left), the rest counted in a marker.
 * Empty when there are no requests.
 */
export function renderUserRequests(
  requests: readonly string[],
  budget: number,
  estimate: EstimateTokens,
  similar: ReadonlyMap<string, Folded> = new Map(),
  heading = USER_REQUESTS_HEADING,
): RenderedRequests {
  if (requests.length === 0) return { text: "", quoted: 0, clipped: 0 };
  const marker = (omitted: number) => `_(${omitted} older request${omitted === 1 ? "" : "s"} left out to stay within ${budget} tokens)_`;
  const whole = requests.reduce((n, r) => n + estimate(quote(r)) + 1, estimate(heading));
  // When not everything fits, room is kept for the marker line that says so.
  const limit = whole <= budget ? budget : budget - estimate(marker(requests.length)) - 1;
  const blocks: string[] = [];
  let used = estimate(heading);
  let quoted = 0;
  let index = 0;
  for (; index < requests.length; index++) {
    const folded = similar.get(requests[index]);
    const block = folded ? `${quote(requests[index])}\n\n${foldedNote(folded)}` : quote(requests[index]);
    const cost = estimate(block) + 1;
    if (used + cost <= limit) {
      blocks.push(block);
      used += cost;
      quoted++;
      continue;
    }
    const room = limit - used - estimate(quote(CLIPPED)) - 1;
    // The newest request is always shown, clipped if it alone is over the budget.
    if (room >= MIN_CLIP_TOKENS || blocks.length === 0) {
      blocks.push(quote(clipTo(requests[index], Math.max(room, MIN_CLIP_TOKENS), estimate)));
      index++;
    }
    break;
  }
  const clipped = requests.length - quoted;
  const omitted = requests.length - index;
  if (omitted > 0) blocks.push(marker(omitted));
  return { text: `${heading}\n\n${blocks.join("\n\n")}`, quoted, clipped };
}

/** The requests quoted in a rendered section (clipped ones with their marker), newest first. */
export function parseUserRequests(section: string): string[] {
  const requests: string[] = [];
  let current: string[] | undefined;
  for (const line of section.split("\n")) {
    if (line.startsWith(">")) {
      current ??= [];
      current.push(line.replace(/^> ?/, ""));
      continue;
    }
    if (current) requests.push(current.join("\n").trim());
    current = undefined;
  }
  if (current) requests.push(current.join("\n").trim());
  return requests.filter(Boolean);
}
