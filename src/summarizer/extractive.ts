/**
 * The offline summarizer: no model, no network, same output on every run. It reads the prompt
 * an LLM would get (transcript, previous summary, extra context, focus) and fills the sections
 * of the LLM prompts with sentences and facts copied from the transcript. It is the fallback when
 * no model is configured, and a baseline that never invents anything.
 */
import { parsePrompt, type ParsedPrompt } from "./extractive-parse.js";
import {
  type ConversationFacts,
  codeSpan,
  currentConstraints,
  currentDecisions,
  errorText,
  extractFacts,
  stillStated,
  isInspection,
  lastQuestion,
  plannedSteps,
} from "./extractive-facts.js";
import { condense } from "./sentences.js";
import { AWAITED, BRANCH_SPECS, EXTRACTIVE_LABEL, HISTORY_SPECS, type Items, LATEST_REQUEST, MAX_OPEN_QUESTIONS, NOT_ANSWERED, SECTION, TURN_PREFIX_SPECS } from "./extractive-layout.js";
import { mergeSummaries } from "./extractive-merge.js";
import { MAX_ITEMS, mergeItems, parseSummary, renderSections, type SectionSpec } from "./extractive-sections.js";
import { actedOn, changedAfter, isCorrection, passedOverQuestions } from "./folding.js";
import { checkRunKind } from "./lifecycle.js";
import { isLogLine, proseOf } from "./user-text.js";
import { SummarizationAbortedError, type SummarizeRequest, type SummarizeResult, type Summarizer } from "./types.js";

export { EXTRACTIVE_LABEL, SECTION };


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
  // a check (tests, typecheck, lint, build) once, as last run: the newer run says the present state
  const actions = facts.commands.filter((run) => run.ok && !isInspection(run.command));
  for (const run of uniqueLast(actions, (r) => checkRunKind(r.command) ?? r.command, MAX_COMMANDS)) items.push(`Ran ${codeSpan(run.command)}`);
  return items;
}

function criticalItems(facts: ConversationFacts, parsed: ParsedPrompt): string[] {
  const items: string[] = [];
  if (parsed.focus) items.push(`Focus requested: ${parsed.focus}`);
  items.push(...parsed.additionalContext);
  const question = lastQuestion(facts.finalAnswer);
  for (const passed of passedOverQuestions(facts).slice(-MAX_OPEN_QUESTIONS)) items.push(`${NOT_ANSWERED}${passed}`);
  if (question) items.push(`${AWAITED}${question}`);
  // Each thing is said once. Files: what changed in each is under Done, and every path is in the
  // <modified-files> and <read-files> lists each compaction appends (pi's, oh-my-pi's, bonsai's).
  // Commands: those that changed or checked something are under Done, a failure that still holds
  // under Blocked; what is left for here is how the agent looked around.
  const looked = uniqueLast(
    facts.commands.filter((run) => run.ok && isInspection(run.command)),
    (r) => r.command,
    MAX_COMMANDS,
  );
  items.push(...looked.map((run) => `Command: ${codeSpan(run.command, 260)}`));
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

/** The user's requests as they stand after the user's later corrections (a request left empty by them is gone), with their place. */
const placedRequests = (facts: ConversationFacts): { text: string; at: number }[] =>
  facts.said.flatMap((s) => {
    const text = s.role === "user" ? stillStated(s.text, facts, "user", s.at) : undefined;
    return text === undefined ? [] : [{ text, at: s.at }];
  });

const currentRequests = (facts: ConversationFacts): string[] => placedRequests(facts).map((r) => r.text);

/**
 * The goal: the span's first request (where the work started), the requests still open, up to
 * three in all, and the latest. An earlier request whose file was changed after it is done and
 * folds out (its work is under Done, its words in the verbatim requests), and a correction is
 * under Constraints, so the goal does not grow with every task finished.
 */
function goalItems(facts: ConversationFacts): string[] {
  const requests = placedRequests(facts);
  const latest = requests.at(-1);
  if (!latest) return [];
  const [first, ...rest] = requests.slice(0, -1);
  const open = rest.filter((r) => !isCorrection(r.text) && !actedOn(r.text, changedAfter(facts, r.at)));
  const shown = [...(first ? [first] : []), ...open].slice(0, 3).map((r) => goalOf(r.text));
  return [...shown, shown.length < requests.length - 1 ? `${LATEST_REQUEST}${goalOf(latest.text)}` : goalOf(latest.text)];
}

function sectionsFromFacts(facts: ConversationFacts, parsed: ParsedPrompt): Items {
  const requests = currentRequests(facts);
  const lastRequest = requests.at(-1);
  const goal = goalItems(facts);
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
  const lastText = facts.assistantTexts[facts.assistantTexts.length - 1];
  const context = [
    // The request above is condensed; its rules are kept whole.
    ...currentConstraints(facts).map((rule) => `Constraint: ${rule}`),
    // a turn's decisions are made in its first half as often as in its second
    ...currentDecisions(facts).map((decision) => `Decision: ${decision}`),
    ...(lastText ? [`Last assistant message: ${condense(lastText, 280)}`] : []),
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
  const modified = mergeItems(
    older.flatMap((summary) => parseSummary(summary).modifiedFiles),
    fileLists(facts).modified,
  );
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
