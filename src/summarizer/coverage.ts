/**
 * The coverage check run after every summary, whatever wrote it (a model, a remote endpoint, the
 * extractive summarizer): deterministic, no model. The facts a continuation cannot do without —
 * the files changed, the user's constraint sentences, the latest request, errors not cleared
 * later, the assistant's decisions, the question left open at the end of the span — must appear in
 * the summary; those that do not are appended verbatim under a short heading, within a budget.
 * Pure functions; the token estimate is passed in.
 */
import type { TranscriptPart } from "./extractive-parse.js";
import { currentConstraints, currentDecisions, errorText, extractFacts, lastQuestion, retiredBySpan } from "./extractive-facts.js";
import { answeredFirst, passedOverQuestions } from "./folding.js";
import { type CoverageKind, GUARD_WORDS, type GuardWords, labelKind } from "./guard-language.js";
import type { EstimateTokens } from "./user-requests.js";

export const COVERAGE_HEADING = GUARD_WORDS.en.coverage;
export const DEFAULT_COVERAGE_TOKENS = 1000;
/** Questions passed over that the check carries from one update to the next, newest. */
const MAX_CARRIED_QUESTIONS = 5;
/** Longest item appended, in characters (a long request is cut, its start is what identifies it). */
const MAX_ITEM_CHARS = 600;

export type { CoverageKind };

export interface CoverageItem {
  kind: CoverageKind;
  /** what is appended, verbatim (on one line) */
  text: string;
  /** what must be found in the summary; `text` when absent */
  probe?: string;
}

/** What the check did, stored in the compaction entry's `details.coverage` and in its event. */
export interface CoverageReport {
  /** facts looked for */
  checked: number;
  /** facts that the summary did not contain, appended below (kind and text) */
  added: { kind: CoverageKind; text: string }[];
  /** missing facts left out because the appendix budget was spent */
  omitted: number;
}

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();
const clip = (text: string) => (text.length > MAX_ITEM_CHARS ? `${text.slice(0, MAX_ITEM_CHARS - 1)}…` : text);

/** Text compared without case, markup, quote markers, spacing and trailing punctuation. */
export function normalizeForMatch(text: string): string {
  const lower = text.normalize("NFKC").toLowerCase();
  // each pass is skipped or kept to what changes: this runs over every summarized span (eval, drops)
  const spaced = (lower.includes(">") ? lower.replace(/^\s*>\s?/gm, "") : lower)
    .replace(/[`*_~]/g, "")
    .replace(/[“”„«»]/g, '"')
    .replace(/[‘’]/g, "'")
    .replace(/[^\S ]\s*| \s+/g, " ");
  let end = spaced.length;
  while (end > 0 && TRAILING.test(spaced[end - 1])) end--;
  return spaced.slice(0, end).trim();
}

/** What a normalized text never ends with: spacing and sentence punctuation. */
const TRAILING = /[\s.,;:!?。！？]/;

/** Whether a probe appears in `summary` (normalized), the summary normalized once for many probes. */
export function mentionedIn(summary: string): (probe: string) => boolean {
  const normalized = normalizeForMatch(summary);
  return (probe) => {
    const needle = normalizeForMatch(probe);
    return needle.length === 0 || normalized.includes(needle);
  };
}

/** Whether `probe` appears in `summary` (normalized). */
export function mentions(summary: string, probe: string): boolean {
  return mentionedIn(summary)(probe);
}

export interface CoverageInput {
  /** the summarized span, as a transcript */
  conversation: readonly TranscriptPart[];
  /** files changed up to the cut (carried over from earlier compactions too) */
  modifiedFiles: readonly string[];
  /** requests quoted by earlier summaries (their constraints still bind) */
  olderRequests?: readonly string[];
  /** items an earlier coverage check appended; they are checked again */
  carried?: readonly CoverageItem[];
}

/** The facts the summary must hold, most important first. */
export function requiredFacts(input: CoverageInput): CoverageItem[] {
  const facts = extractFacts(input.conversation);
  const items: CoverageItem[] = [];
  if (facts.lastRequest) items.push({ kind: "request", text: clip(oneLine(facts.lastRequest)) });
  const question = lastQuestion(facts.finalAnswer);
  if (question) items.push({ kind: "question", text: oneLine(question) });
  for (const passed of passedOverQuestions(facts)) items.push({ kind: "unanswered", text: oneLine(passed) });
  for (const error of facts.openErrors) items.push({ kind: "error", text: clip(errorText(error)), probe: error.line });
  // only what still holds: a requirement the user corrected or a decision reversed later is not required
  for (const sentence of currentConstraints(facts, input.olderRequests)) items.push({ kind: "constraint", text: clip(oneLine(sentence)) });
  for (const sentence of currentDecisions(facts)) items.push({ kind: "decision", text: clip(oneLine(sentence)) });
  for (const path of input.modifiedFiles) items.push({ kind: "file", text: `\`${path}\``, probe: path });
  // items an earlier check carried forward, less those this span retired; the question an earlier
  // span ended on is settled by an answer, and still open when the span's first message passed it over
  const carried = input.carried ?? [];
  // questions passed over stay open, the newest few: nothing tells when one was answered later
  const unanswered = carried.filter((item) => item.kind === "unanswered").slice(-MAX_CARRIED_QUESTIONS);
  for (const item of carried) {
    if (item.kind === "question") {
      if (facts.userTurns.length === 0) items.push(item);
      else if (!answeredFirst(facts)) items.push({ kind: "unanswered", text: item.text });
    } else if (item.kind === "unanswered") {
      if (unanswered.includes(item)) items.push(item);
    } else if (!retiredBySpan(item.text, facts, item.kind === "decision" ? "anyone" : "user")) {
      items.push(item);
    }
  }
  const seen = new Set<string>();
  return items.filter((item) => {
    const k = normalizeForMatch(item.probe ?? item.text);
    if (!k || seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

export interface CoverageResult {
  /** the appendix (heading and items), or "" when nothing is missing */
  text: string;
  report: CoverageReport;
}

/**
 * Checks `summary` for every fact and renders what is missing, within `budget` tokens (the most
 * important facts first; what does not fit is counted in `omitted`), headed and labelled in the
 * conversation's language (`words`).
 */
export function checkCoverage(summary: string, facts: readonly CoverageItem[], budget: number, estimate: EstimateTokens, words: GuardWords = GUARD_WORDS.en): CoverageResult {
  const haystack = normalizeForMatch(summary);
  const missing = facts.filter((fact) => !haystack.includes(normalizeForMatch(fact.probe ?? fact.text)));
  const lines: string[] = [];
  const added: CoverageReport["added"] = [];
  let used = estimate(words.coverage);
  for (const fact of missing) {
    const line = `- ${words.labels[fact.kind]}: ${fact.text}`;
    const cost = estimate(line) + 1;
    if (used + cost > budget) continue;
    lines.push(line);
    added.push({ kind: fact.kind, text: fact.text });
    used += cost;
  }
  const report: CoverageReport = { checked: facts.length, added, omitted: missing.length - added.length };
  return { text: lines.length > 0 ? `${words.coverage}\n\n${lines.join("\n")}` : "", report };
}

/** The kinds an earlier appendix hands to the next update (a request or an error of an older span is superseded by newer work). */
const CARRIED: ReadonlySet<CoverageKind> = new Set(["constraint", "decision", "question", "unanswered"]);

/**
 * The items of an earlier appendix that may still hold on the next update: constraints,
 * decisions and questions; requiredFacts decides which do.
 */
export function parseCoverage(section: string): CoverageItem[] {
  const items: CoverageItem[] = [];
  for (const line of section.split("\n")) {
    const match = /^- ([^:]+): (.+)$/.exec(line.trim());
    const kind = match ? labelKind(match[1]) : undefined;
    if (match && kind && CARRIED.has(kind)) items.push({ kind, text: match[2] });
  }
  return items;
}
