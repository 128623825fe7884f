/**
 * The extractive summarizer's layout: the section titles it shares with the LLM prompts
 * (src/prompts), so either kind of summary reads the same, and how each kind of summary
 * renders them.
 */
import { PROGRESS_SUBSECTIONS, SUMMARY_SECTIONS, TURN_PREFIX_SECTIONS } from "../prompts/compaction.js";
import type { SectionSpec } from "./extractive-sections.js";

export const EXTRACTIVE_LABEL = "_(extractive summary: built without a language model)_";

const [GOAL, CONSTRAINTS, PROGRESS, DECISIONS, NEXT, CRITICAL] = SUMMARY_SECTIONS;
const [DONE, IN_PROGRESS, BLOCKED] = PROGRESS_SUBSECTIONS;
const [ORIGINAL_REQUEST, EARLY_PROGRESS, SUFFIX_CONTEXT] = TURN_PREFIX_SECTIONS;

/** Section titles of the LLM prompts (src/prompts), so either kind of summary reads the same. */
export const SECTION = {
  goal: GOAL,
  constraints: CONSTRAINTS,
  /** the branch-summary prompt's shorter heading */
  branchConstraints: "Constraints",
  progress: PROGRESS,
  done: DONE,
  inProgress: IN_PROGRESS,
  blocked: BLOCKED,
  decisions: DECISIONS,
  next: NEXT,
  critical: CRITICAL,
  originalRequest: ORIGINAL_REQUEST,
  earlyProgress: EARLY_PROGRESS,
  suffixContext: SUFFIX_CONTEXT,
} as const;

export const HISTORY_SPECS: SectionSpec[] = [
  { title: SECTION.goal, level: 2, style: "bullet", keep: "first", maxItems: 8 },
  { title: SECTION.constraints, level: 2, style: "bullet", keep: "first" },
  { title: SECTION.progress, level: 2, style: "bullet", group: true },
  { title: SECTION.done, level: 3, style: "done", keep: "last" },
  { title: SECTION.inProgress, level: 3, style: "open", keep: "last", maxItems: 10 },
  { title: SECTION.blocked, level: 3, style: "bullet", keep: "last", maxItems: 15 },
  { title: SECTION.decisions, level: 2, style: "bullet", keep: "last" },
  { title: SECTION.next, level: 2, style: "numbered", keep: "first", maxItems: 10 },
  // Every touched file is listed: file paths are what a continuation needs most.
  { title: SECTION.critical, level: 2, style: "bullet", keep: "first", maxItems: 200 },
];

export const BRANCH_SPECS: SectionSpec[] = HISTORY_SPECS.filter((s) => s.title !== SECTION.critical).map((s) =>
  s.title === SECTION.constraints ? { ...s, title: SECTION.branchConstraints } : s,
);

export const TURN_PREFIX_SPECS: SectionSpec[] = [
  { title: SECTION.originalRequest, level: 2, style: "plain", keep: "first", maxItems: 3 },
  { title: SECTION.earlyProgress, level: 2, style: "bullet", keep: "last" },
  { title: SECTION.suffixContext, level: 2, style: "bullet", keep: "first", maxItems: 120 },
];

/** How Critical Context says the question the conversation ends on, and one the user passed over. */
export const AWAITED = "Question awaiting the user's answer: ";
/** How the Goal marks the latest request when earlier ones are shown or folded before it. */
export const LATEST_REQUEST = "Latest request: ";
export const NOT_ANSWERED = "Question not answered yet: ";
/** Questions passed over that a summary keeps, newest. */
export const MAX_OPEN_QUESTIONS = 5;

export type Items = Map<string, string[]>;
