/**
 * What every compaction summary gets after its summarizer answered: the coverage check's appendix
 * (what the summary missed, verbatim) and the verbatim user-requests section, in that order, both
 * bounded. `splitGuardSections` reads both back out of a stored summary, so an update hands the
 * summarizer the summary alone and merges the sections itself: they are never duplicated and
 * never grow past their budgets. Pure functions; the token estimate is passed in.
 */
import { parseTranscript } from "./extractive-parse.js";
import { anyHeading, conversationLanguage, GUARD_WORDS, type GuardLanguage, type GuardWords } from "./guard-language.js";
import { type CoverageItem, type CoverageReport, checkCoverage, DEFAULT_COVERAGE_TOKENS, parseCoverage, requiredFacts } from "./coverage.js";
import {
  DEFAULT_USER_REQUESTS_TOKENS,
  type EstimateTokens,
  clipTo,
  foldSimilar,
  mergeUserRequests,
  parseUserRequests,
  quote,
  renderUserRequests,
  userRequests,
} from "./user-requests.js";

export interface GuardSettings {
  /** end the summary with the user's requests, verbatim (default true) */
  verbatimRequests?: boolean;
  /** run the coverage check and append what is missing (default true) */
  coverageCheck?: boolean;
  /** budget of the requests section in tokens (default 2,000) */
  requestTokens?: number;
  /** budget of the coverage appendix in tokens (default 1,000) */
  coverageTokens?: number;
}

export interface GuardSections {
  /** the summary without the two sections */
  body: string;
  /** requests quoted by the summary, newest first */
  requests: string[];
  /** constraint and decision items its coverage appendix carried */
  carried: CoverageItem[];
}

export const PINNED_HEADING = GUARD_WORDS.en.pinned;
/** A pinned text longer than this many tokens is cut, marked: a pin keeps a message, not a log. */
export const MAX_PINNED_TOKENS = 2000;

/**
 * The section every compaction ends with while entries are pinned (format/pins.ts): each pinned
 * text quoted word for word under its entry id, oldest first. Recomputed from the path each time,
 * so it is never merged, duplicated or dropped by an update. "" when nothing is pinned.
 */
export function renderPinned(pinned: readonly { entryId: string; text: string }[], estimate: EstimateTokens, words: GuardWords = GUARD_WORDS.en): string {
  if (pinned.length === 0) return "";
  const blocks = pinned.map(({ entryId, text }) => {
    const body = estimate(text.trim()) > MAX_PINNED_TOKENS ? clipTo(text.trim(), MAX_PINNED_TOKENS, estimate) : text.trim();
    return `_(entry ${entryId})_\n${quote(body)}`;
  });
  return `${words.pinned}\n\n${blocks.join("\n\n")}`;
}

/** A stored summary without its pinned section (the next compaction writes it again). */
export function withoutPinned(summary: string): string {
  for (const heading of anyHeading("pinned")) {
    const range = sectionRange(summary, heading);
    if (range) return withoutRange(summary, range);
  }
  return summary;
}

/** `text` with the section at `range` taken out, the text around it joined by one blank line. */
const withoutRange = (text: string, range: { start: number; end: number }) =>
  `${text.slice(0, range.start).trimEnd()}\n\n${text.slice(range.end).trimStart()}`.trim();

/** Where the section under `heading` starts and ends (the next `## ` heading or the end), or undefined. */
function sectionRange(text: string, heading: string): { start: number; end: number } | undefined {
  const at = text.startsWith(`${heading}\n`) ? 0 : text.indexOf(`\n${heading}\n`);
  if (at < 0) return undefined;
  const start = at === 0 ? 0 : at + 1;
  const next = text.slice(start + heading.length).search(/\n## /);
  return { start, end: next < 0 ? text.length : start + heading.length + next };
}

/** Reads the requests section and the coverage appendix out of a stored summary (file tags already stripped). */
export function splitGuardSections(summary: string): GuardSections {
  let body = summary;
  let requests: string[] = [];
  let carried: CoverageItem[] = [];
  // in whichever language the summary was written
  const take = (headings: readonly string[]): string | undefined => {
    for (const heading of headings) {
      const range = sectionRange(body, heading);
      if (!range) continue;
      const section = body.slice(range.start + heading.length, range.end);
      body = withoutRange(body, range);
      return section;
    }
    return undefined;
  };
  const requestSection = take(anyHeading("requests"));
  if (requestSection !== undefined) requests = parseUserRequests(requestSection);
  const coverageSection = take(anyHeading("coverage"));
  if (coverageSection !== undefined) carried = parseCoverage(coverageSection);
  return { body, requests, carried };
}

export interface GuardInput {
  /** the summarizer's text (with the turn-prefix part of a split turn), without file tags */
  summary: string;
  /** the summarized span, serialized (messages/serialize.ts) */
  conversation: string;
  /** files changed up to the cut */
  modifiedFiles: readonly string[];
  /** texts of the pinned section written beside the summary: present, so the check does not add them again */
  pinned?: readonly string[];
  /** read out of the previous summary on an update */
  previous?: Pick<GuardSections, "requests" | "carried">;
  /**
   * Estimated tokens the summary replaces (the span and the previous summary). The sections take
   * at most 40% and 20% of it, so a small span whose bulk is the user's own words still shrinks.
   */
  replacedTokens?: number;
  /**
   * The history summary's own token budget (from `reserveTokens`). The sections take at most 16%
   * and 8% of it: the full 2,000 and 1,000 tokens at the default reserve, less for a small window.
   */
  summaryBudget?: number;
}

/** Shares of the replaced tokens the requests section and the coverage appendix may take at most. */
export const REQUESTS_SHARE = 0.4;
export const COVERAGE_SHARE = 0.2;
/** Shares of the summary budget they may take at most. */
export const REQUESTS_BUDGET_SHARE = 0.16;
export const COVERAGE_BUDGET_SHARE = 0.08;

export interface GuardResult {
  text: string;
  /** the language the sections were written in (the user's) */
  language: GuardLanguage;
  /** undefined when the check was turned off */
  coverage?: CoverageReport;
}

/** The summary with the coverage appendix and the requests section appended, as configured. */
export function guardSummary(input: GuardInput, settings: GuardSettings, estimate: EstimateTokens): GuardResult {
  const parts = parseTranscript(input.conversation);
  const previousRequests = input.previous?.requests ?? [];
  const spanRequests = userRequests(parts);
  const language = conversationLanguage([...spanRequests, ...previousRequests]);
  const words = GUARD_WORDS[language];
  const cap = (budget: number, share: number, budgetShare: number) =>
    Math.min(
      budget,
      input.replacedTokens === undefined ? budget : Math.floor(input.replacedTokens * share),
      input.summaryBudget === undefined ? budget : Math.floor(input.summaryBudget * budgetShare),
    );
  let requestSection = "";
  if (settings.verbatimRequests !== false) {
    const { requests, similar } = foldSimilar(mergeUserRequests(spanRequests, previousRequests));
    const budget = cap(settings.requestTokens ?? DEFAULT_USER_REQUESTS_TOKENS, REQUESTS_SHARE, REQUESTS_BUDGET_SHARE);
    requestSection = renderUserRequests(requests, budget, estimate, similar, words.requests).text;
  }
  const sections = [input.summary.trim()];
  let coverage: CoverageReport | undefined;
  if (settings.coverageCheck !== false) {
    const facts = requiredFacts({
      conversation: parts,
      modifiedFiles: input.modifiedFiles,
      olderRequests: previousRequests,
      carried: input.previous?.carried,
    });
    // File paths count as present when the file tags will list them, pinned texts when the pinned section will quote them.
    const present = [input.summary, requestSection, ...input.modifiedFiles, ...(input.pinned ?? [])].join("\n");
    const checked = checkCoverage(present, facts, cap(settings.coverageTokens ?? DEFAULT_COVERAGE_TOKENS, COVERAGE_SHARE, COVERAGE_BUDGET_SHARE), estimate, words);
    coverage = checked.report;
    if (checked.text) sections.push(checked.text);
  }
  if (requestSection) sections.push(requestSection);
  const result: GuardResult = { text: sections.join("\n\n"), language };
  if (coverage) result.coverage = coverage;
  return result;
}
