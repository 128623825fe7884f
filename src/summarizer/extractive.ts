/**
 * The offline summarizer: no model, no network, same output on every run. It reads the prompt
 * an LLM would get (transcript, previous summary, extra context, focus) and fills the sections
 * of the LLM prompts with sentences and facts copied from the transcript. It is the fallback when
 * no model is configured, and a baseline that never invents anything.
 */
import { PROGRESS_SUBSECTIONS, SUMMARY_SECTIONS, TURN_PREFIX_SECTIONS } from "../prompts/compaction.js";
import { parsePrompt, type ParsedPrompt } from "./extractive-parse.js";
import {
  type ConversationFacts,
  codeSpan,
  condense,
  currentConstraints,
  currentDecisions,
  errorText,
  extractFacts,
  stillStated,
  isInspection,
  lastQuestion,
  plannedSteps,
} from "./extractive-facts.js";
import { checksOf, isLogLine, proseOf } from "./user-text.js";
import { checkKind } from "./lifecycle.js";
import { MAX_ITEMS, mergeItems, parseSummary, renderSections, type SectionSpec } from "./extractive-sections.js";
import { SummarizationAbortedError, type SummarizeRequest, type SummarizeResult, type Summarizer } from "./types.js";

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

const HISTORY_SPECS: SectionSpec[] = [
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

const BRANCH_SPECS: SectionSpec[] = HISTORY_SPECS.filter((s) => s.title !== SECTION.critical).map((s) =>
  s.title === SECTION.constraints ? { ...s, title: SECTION.branchConstraints } : s,
);

const TURN_PREFIX_SPECS: SectionSpec[] = [
  { title: SECTION.originalRequest, level: 2, style: "plain", keep: "first", maxItems: 3 },
  { title: SECTION.earlyProgress, level: 2, style: "bullet", keep: "last" },
  { title: SECTION.suffixContext, level: 2, style: "bullet", keep: "first", maxItems: 120 },
];

type Items = Map<string, string[]>;

const MAX_FILES = 100;
const MAX_COMMANDS = 15;

function uniqueLast<T>(values: readonly T[], key: (v: T) => string, max: number): T[] {
  const seen = new Set<string>();
  const out: T[] = [];
  for (let i = values.length - 1; i >= 0 && out.length < max; i--) {
    const k = key(values[i]);
    if (!seen.has(k)) {
      seen.add(k);
      out.unshift(values[i]);
    }
  }
  return out;
}

/** Paths touched, modified ones first, each once, in order of first appearance. */
function fileLists(facts: ConversationFacts): { modified: string[]; read: string[] } {
  const modified = mergeItems(facts.fileOps.filter((op) => op.kind !== "read").map((op) => op.path));
  const modifiedSet = new Set(modified);
  const read = mergeItems(facts.fileOps.filter((op) => op.kind === "read" && !modifiedSet.has(op.path)).map((op) => op.path));
  return { modified: modified.slice(0, MAX_FILES), read: read.slice(0, MAX_FILES) };
}

function doneItems(facts: ConversationFacts): string[] {
  const perFile = new Map<string, { wrote: number; edited: number }>();
  for (const op of facts.fileOps) {
    if (op.kind === "read" || !op.ok) continue;
    const counts = perFile.get(op.path) ?? { wrote: 0, edited: 0 };
    if (op.kind === "write") counts.wrote++;
    else counts.edited++;
    perFile.set(op.path, counts);
  }
  const items = [...perFile].map(([path, { wrote, edited }]) => {
    const verb = wrote > 0 ? (edited > 0 ? "Wrote and edited" : "Wrote") : "Edited";
    const times = wrote + edited > 1 ? ` (${wrote + edited} changes)` : "";
    return `${verb} ${codeSpan(path)}${times}`;
  });
  const actions = facts.commands.filter((run) => run.ok && !isInspection(run.command));
  for (const run of uniqueLast(actions, (r) => r.command, MAX_COMMANDS)) items.push(`Ran ${codeSpan(run.command)}`);
  return items;
}

function criticalItems(facts: ConversationFacts, parsed: ParsedPrompt): string[] {
  const items: string[] = [];
  if (parsed.focus) items.push(`Focus requested: ${parsed.focus}`);
  items.push(...parsed.additionalContext);
  const question = lastQuestion(facts.finalAnswer);
  if (question) items.push(`Question awaiting the user's answer: ${question}`);
  // Files only read are left to the <read-files> list every compaction (pi's, oh-my-pi's, bonsai's) appends: said once.
  items.push(...fileLists(facts).modified.map((path) => `Modified: ${codeSpan(path, 280)}`));
  const commands = uniqueLast(facts.commands, (r) => r.command, MAX_COMMANDS);
  items.push(...commands.map((run) => `Command${run.ok ? "" : " (failed)"}: ${codeSpan(run.command, 260)}`));
  return items;
}

/** The sections a conversation yields by itself, before any previous summary is merged in. */
/**
 * A request as a goal: its prose, pasted logs and code left out; a request that is nothing but
 * pasted output is named by its first error line.
 */
function goalOf(request: string): string {
  const prose = proseOf(request).trim();
  if (prose.replace(/[\s:.,-]/g, "").length >= 8) return condense(prose);
  const pasted = request.split("\n").find((line) => isLogLine(line));
  return `Pasted output: ${codeSpan(pasted ?? request, 200)}`;
}

/** The user's requests as they stand after the user's later corrections (a request left empty by them is gone). */
const currentRequests = (facts: ConversationFacts): string[] =>
  facts.said.filter((s) => s.role === "user").flatMap((s) => stillStated(s.text, facts, "user", s.at) ?? []);

function sectionsFromFacts(facts: ConversationFacts, parsed: ParsedPrompt): Items {
  const requests = currentRequests(facts);
  const lastRequest = requests.at(-1);
  const goal = requests.slice(0, 3).map(goalOf);
  if (lastRequest && requests.length > 3) goal.push(`Latest request: ${goalOf(lastRequest)}`);
  const inProgress = facts.endsMidTurn && lastRequest ? [condense(lastRequest)] : [];
  const finalAnswer = facts.finalAnswer ?? facts.assistantTexts[facts.assistantTexts.length - 1];
  let next = finalAnswer ? plannedSteps(finalAnswer) : [];
  if (next.length === 0 && facts.endsMidTurn && lastRequest) next = [`Continue: ${condense(lastRequest, 200)}`];
  return new Map([
    [SECTION.goal, goal],
    [SECTION.constraints, currentConstraints(facts)],
    [SECTION.done, doneItems(facts)],
    [SECTION.inProgress, inProgress],
    [SECTION.blocked, facts.openErrors.map(errorText)],
    [SECTION.decisions, currentDecisions(facts)],
    [SECTION.next, next],
    [SECTION.critical, criticalItems(facts, parsed)],
  ]);
}

/** Sections refreshed by newer work instead of accumulated (the LLM update prompt does the same). */
const REFRESHED: ReadonlySet<string> = new Set([SECTION.inProgress, SECTION.next]);
/** Headings other summaries use for our sections. */
const ALIASES: Record<string, string> = {
  [SECTION.branchConstraints]: SECTION.constraints,
  // Items written straight under "## Progress" (no subsections) are progress made.
  [SECTION.progress]: SECTION.done,
  Decisions: SECTION.decisions,
  "Next steps": SECTION.next,
  "Key decisions": SECTION.decisions,
  // A split turn's notes from the previous summary: its request is a goal, its context stays critical.
  [SECTION.originalRequest]: SECTION.goal,
  [SECTION.earlyProgress]: SECTION.done,
  [SECTION.suffixContext]: SECTION.critical,
};

/**
 * An item of an earlier summary as it stands after the span: a goal, constraint or decision less
 * what the span corrected or reversed; an error gone once a check of its kind passed in the span.
 */
function olderItem(title: string, item: string, facts: ConversationFacts): string | undefined {
  if (title === SECTION.goal || title === SECTION.constraints) return stillStated(item, facts, "user");
  if (title === SECTION.decisions) return stillStated(item, facts, "anyone");
  // an older summary's read files: its <read-files> list, which the compaction carries, says them
  if (title === SECTION.critical && item.startsWith("Read: ")) return undefined;
  if (title === SECTION.blocked) {
    const command = /^`([^`]+)`/.exec(item)?.[1];
    const kind = command && checkKind(command);
    const check = command && checksOf(command)[0];
    const passed = facts.commands.some((run) => run.ok && ((kind && checkKind(run.command) === kind) || (check && checksOf(run.command).includes(check))));
    return passed ? undefined : item;
  }
  return item;
}

/**
 * Older summaries first: their items keep their place and newer ones are added after them,
 * except in the refreshed sections, where the latest non-empty list wins. With the span's
 * `facts`, an older item is taken as it stands after the span (olderItem).
 */
function mergeSummaries(older: readonly string[], current: Items, facts?: ConversationFacts): Items {
  const merged: Items = new Map();
  const extraTitles: string[] = [];
  const known = new Set(HISTORY_SPECS.map((s) => s.title));
  const absorb = (title: string, items: readonly string[], refresh: boolean) => {
    const key = ALIASES[title] ?? title;
    if (!known.has(key) && !extraTitles.includes(key)) extraTitles.push(key);
    const before = merged.get(key) ?? [];
    merged.set(key, refresh && items.length > 0 ? [...items] : mergeItems(before, items));
  };
  for (const summary of older) {
    const parsed = parseSummary(summary);
    for (const [title, items] of parsed.sections) {
      const key = ALIASES[title] ?? title;
      const holding = facts ? items.flatMap((item) => olderItem(key, item, facts) ?? []) : items;
      absorb(title, holding, REFRESHED.has(key));
    }
    absorb(
      SECTION.critical,
      parsed.modifiedFiles.map((p) => `Modified: ${codeSpan(p, 280)}`),
      false,
    );
  }
  for (const [title, items] of current) absorb(title, items, REFRESHED.has(title));
  return merged;
}

function extraSpecs(items: Items): SectionSpec[] {
  const known = new Set([...HISTORY_SPECS, ...TURN_PREFIX_SPECS].map((s) => s.title));
  return [...items.keys()]
    .filter((title) => !known.has(title) && (items.get(title)?.length ?? 0) > 0)
    .map((title) => ({ title, level: 2, style: "bullet", keep: "first" }) as SectionSpec);
}

const labelled = (body: string) => `${EXTRACTIVE_LABEL}\n\n${body}`;

function historySummary(parsed: ParsedPrompt, facts: ConversationFacts): string {
  const older = [...(parsed.previousSummary ? [parsed.previousSummary] : []), ...facts.quotedSummaries];
  const items = mergeSummaries(older, sectionsFromFacts(facts, parsed), facts);
  return labelled(renderSections([...HISTORY_SPECS, ...extraSpecs(items)], items));
}

function branchSummary(parsed: ParsedPrompt, facts: ConversationFacts): string {
  const items = mergeSummaries(facts.quotedSummaries, sectionsFromFacts(facts, parsed), facts);
  items.set(SECTION.branchConstraints, items.get(SECTION.constraints) ?? []);
  return labelled(renderSections(BRANCH_SPECS, items));
}

function turnPrefixSummary(facts: ConversationFacts): string {
  const request = currentRequests(facts)[0];
  const { modified } = fileLists(facts);
  const lastText = facts.assistantTexts[facts.assistantTexts.length - 1];
  const context = [
    // The request above is condensed; its rules are kept whole.
    ...currentConstraints(facts).map((rule) => `Constraint: ${rule}`),
    ...(lastText ? [`Last assistant message: ${condense(lastText, 280)}`] : []),
    ...modified.map((path) => `Modified: ${codeSpan(path, 280)}`),
    ...uniqueLast(facts.commands, (r) => r.command, 5).map((r) => `Command${r.ok ? "" : " (failed)"}: ${codeSpan(r.command, 260)}`),
  ];
  const items: Items = new Map([
    [SECTION.originalRequest, request ? [condense(request, 290)] : []],
    [SECTION.earlyProgress, [...doneItems(facts), ...facts.openErrors.map((e) => `Failed: ${errorText(e)}`)]],
    [SECTION.suffixContext, context],
  ]);
  return labelled(renderSections(TURN_PREFIX_SPECS, items));
}

const sentence = (text: string) => {
  const trimmed = text.trim().replace(/\s+/g, " ");
  return /[.!?。！？]$/.test(trimmed) ? trimmed : `${trimmed}.`;
};

function listing(values: readonly string[], max = 3): string {
  const shown = values.slice(0, max).map((v) => codeSpan(v, 60));
  const more = values.length - shown.length;
  if (more > 0) return `${shown.join(", ")} and ${more} more`;
  return shown.length > 1 ? `${shown.slice(0, -1).join(", ")} and ${shown[shown.length - 1]}` : (shown[0] ?? "");
}

/** Two or three sentences: what changed, what is still open, what comes next. */
function shortSummary(parsed: ParsedPrompt, facts: ConversationFacts): string {
  const older = [...(parsed.previousSummary ? [parsed.previousSummary] : []), ...facts.quotedSummaries];
  const items = mergeSummaries(older, sectionsFromFacts(facts, parsed), facts);
  const modified = (items.get(SECTION.critical) ?? [])
    .filter((item) => item.startsWith("Modified: "))
    .map((item) => item.slice("Modified: ".length).replace(/^`|`$/g, ""));
  const out: string[] = [];
  if (modified.length > 0) out.push(sentence(`Changed ${listing(modified)}`));
  else {
    const done = items.get(SECTION.done) ?? [];
    out.push(sentence(done.length > 0 ? done[done.length - 1] : "No files were changed yet"));
  }
  const open = items.get(SECTION.blocked)?.at(-1) ?? items.get(SECTION.inProgress)?.at(-1);
  if (open) out.push(sentence(`Still open: ${open.slice(0, 200)}`));
  const next = items.get(SECTION.next)?.[0];
  if (next) out.push(sentence(`Next: ${next.slice(0, 200)}`));
  return out.slice(0, 3).join(" ");
}

/** Merges chunk summaries (and any transcript) into one summary with the history sections. */
function mergeSummary(parsed: ParsedPrompt, facts: ConversationFacts): string {
  const summaries = [
    ...(parsed.previousSummary ? [parsed.previousSummary] : []),
    ...parsed.otherBlocks.map((b) => b.content),
    ...facts.quotedSummaries,
  ];
  // Pieces of one split turn's beginning merge into turn-prefix notes, not a history summary.
  const turnPrefix = summaries.some((summary) => parseSummary(summary).sections.has(SECTION.originalRequest));
  if (turnPrefix && !parsed.conversation) {
    const items: Items = new Map();
    for (const summary of summaries) {
      for (const [title, list] of parseSummary(summary).sections) items.set(title, mergeItems(items.get(title) ?? [], list));
    }
    return labelled(renderSections(TURN_PREFIX_SPECS, items));
  }
  const items = mergeSummaries(summaries, parsed.conversation ? sectionsFromFacts(facts, parsed) : new Map());
  return labelled(renderSections([...HISTORY_SPECS, ...extraSpecs(items)], items));
}

/** The extractive summary of one request; pure, so it can run anywhere (CLI, server, tests). */
export function extractiveSummary(prompt: string, purpose: SummarizeRequest["purpose"]): string {
  const parsed = parsePrompt(prompt);
  const facts = extractFacts(parsed.conversation ?? []);
  switch (purpose) {
    case "turn-prefix":
      return turnPrefixSummary(facts);
    case "short":
      return shortSummary(parsed, facts);
    case "branch":
      return branchSummary(parsed, facts);
    case "merge":
      return mergeSummary(parsed, facts);
    default:
      return historySummary(parsed, facts);
  }
}

export function extractiveSummarizer(): Summarizer {
  return {
    name: "extractive",
    contextWindow: 0,
    reasoning: false,
    async summarize(request: SummarizeRequest): Promise<SummarizeResult> {
      if (request.signal?.aborted) throw new SummarizationAbortedError();
      return { text: extractiveSummary(request.prompt, request.purpose), model: "extractive" };
    },
  };
}

export { MAX_ITEMS };
