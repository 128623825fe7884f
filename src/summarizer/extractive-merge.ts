/**
 * How the extractive summarizer takes in earlier summaries (the previous compaction's, chunk
 * summaries of a merge, summaries quoted in the span): each item as it stands after the span —
 * retired when the span corrected, reversed, fixed, answered or finished it, moved to the section
 * that now says it — so that a chain of compactions states the present and does not grow with
 * every task finished. Pure functions.
 */
import { type ConversationFacts, stillStated } from "./extractive-facts.js";
import { AWAITED, type Items, LATEST_REQUEST, MAX_OPEN_QUESTIONS, NOT_ANSWERED, SECTION } from "./extractive-layout.js";
import { mergeItems, parseSummary } from "./extractive-sections.js";
import { actedOn, answeredFirst, changedAfter, isCorrection, namedPaths } from "./folding.js";
import { checkKind, checkRunKind } from "./lifecycle.js";
import { checksOf } from "./user-text.js";

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

/** Whether a check of `command`'s kind (or the same program and subcommand) passed in the span: its error is fixed. */
function passedSince(command: string, facts: ConversationFacts): boolean {
  const kind = checkKind(command);
  const check = checksOf(command)[0];
  return facts.commands.some((run) => run.ok && ((kind && checkKind(run.command) === kind) || (check && checksOf(run.command).includes(check))));
}

/** Whether the span ran a check of the kind `command` ran (tests, typecheck, lint, build): the newer run says the present state. */
function checkedAgain(command: string, facts: ConversationFacts): boolean {
  const kind = checkRunKind(command);
  return kind !== undefined && facts.commands.some((run) => checkRunKind(run.command) === kind);
}

const command = (item: string) => /`([^`]+)`/.exec(item)?.[1];

/** How the Goal marks the latest request, and how a split turn's request is taken in. */
const LATEST = new RegExp(`^${LATEST_REQUEST}`);

/** A Done item that says a file was changed (as doneItems writes it). */
const FILE_CHANGE = /^(?:Wrote and edited|Wrote|Edited) `[^`]+`(?: \(\d+ changes\))?$/;
/** The line the file changes of earlier summaries fold into, with how many it stands for. */
const EARLIER_CHANGES = /^Changed (\d+) files? in earlier work \(the modified-files list names them\)$/;
export const earlierChanges = (files: number) => `Changed ${files} file${files === 1 ? "" : "s"} in earlier work (the modified-files list names them)`;

/** How many file changes a Done item of an earlier summary stands for (0 when it is not one). */
function fileChanges(item: string): number {
  if (FILE_CHANGE.test(item)) return 1;
  return Number(EARLIER_CHANGES.exec(item)?.[1] ?? 0);
}

/**
 * An item of an earlier summary as it stands after the span, and the section it belongs in now;
 * undefined when the span retired it. `changed` holds the files the earlier summaries say were
 * changed; the `origin` (the first goal of the oldest summary, where the work started) is never
 * folded as done.
 */
function olderItem(key: string, item: string, facts: ConversationFacts, changed: readonly string[], origin = false): [string, string] | undefined {
  const newerRequest = facts.requests.length > 0 && !origin;
  const keep = (text: string | undefined, at = key): [string, string] | undefined => (text === undefined ? undefined : [at, text]);
  switch (key) {
    case SECTION.goal:
      // once a newer request took its place: a goal whose file was changed is done, a correction
      // is under Constraints, and the latest request is latest no more
      if (!newerRequest) return keep(stillStated(item, facts, "user"));
      // an earlier goal was weighed when its summary was made; only the latest request then may
      // have been done after it, in work the earlier summaries list (`changed`)
      if (isCorrection(item) || actedOn(item, [...(LATEST.test(item) ? changed : []), ...changedAfter(facts, -1)])) return undefined;
      return keep(stillStated(item.replace(LATEST, ""), facts, "user"));
    case SECTION.constraints:
      return keep(stillStated(item, facts, "user"));
    case SECTION.decisions:
      return keep(stillStated(item, facts, "anyone"));
    case SECTION.done: {
      // a split turn's failure is an error like any other; a check run again says the newer state
      if (item.startsWith("Failed: ")) return olderItem(SECTION.blocked, item.slice("Failed: ".length), facts, changed);
      const ran = item.startsWith("Ran ") ? command(item) : undefined;
      return ran && checkedAgain(ran, facts) ? undefined : keep(item);
    }
    case SECTION.blocked: {
      // an error is gone once a check of its kind passed in the span
      const failed = /^`([^`]+)`/.exec(item)?.[1];
      return failed && passedSince(failed, facts) ? undefined : keep(item);
    }
    case SECTION.critical:
      // files are under Done and in the lists the compaction appends; a failure under Blocked
      if (/^(?:Read|Modified|Command \(failed\)): /.test(item)) return undefined;
      if (item.startsWith("Constraint: ")) return olderItem(SECTION.constraints, item.slice("Constraint: ".length), facts, changed);
      if (item.startsWith("Decision: ")) return olderItem(SECTION.decisions, item.slice("Decision: ".length), facts, changed);
      // a question the span's first message answered is settled; one it passed over is still open
      if (item.startsWith(AWAITED) && facts.userTurns.length > 0) {
        return answeredFirst(facts) ? undefined : keep(`${NOT_ANSWERED}${item.slice(AWAITED.length)}`);
      }
      return keep(item);
    default:
      return keep(item);
  }
}

/** The files an earlier summary says were changed: its file list, and the paths its Done items name. */
function changedIn(parsed: ReturnType<typeof parseSummary>): string[] {
  const done = [...parsed.sections].filter(([title]) => (ALIASES[title] ?? title) === SECTION.done).flatMap(([, items]) => items);
  return [...parsed.modifiedFiles, ...done.filter((item) => !item.startsWith("Ran ")).flatMap(namedPaths)];
}

/**
 * Older summaries first: their items keep their place and newer ones are added after them,
 * except in the refreshed sections, where the latest non-empty list wins. With the span's
 * `facts`, an older item is taken as it stands after the span (olderItem).
 */
export function mergeSummaries(older: readonly string[], current: Items, facts?: ConversationFacts): Items {
  const merged: Items = new Map();
  const absorb = (key: string, items: readonly string[], refresh: boolean) => {
    const before = merged.get(key) ?? [];
    merged.set(key, refresh && items.length > 0 ? [...items] : mergeItems(before, items));
  };
  const parsedOlder = older.map(parseSummary);
  const changed = parsedOlder.flatMap(changedIn);
  // On an update, the file changes of earlier summaries fold into one line: the file list names
  // each file, and a Done that lists every file ever changed grows with every task finished.
  let folded = 0;
  for (const [n, parsed] of parsedOlder.entries()) {
    for (const [title, sectionItems] of parsed.sections) {
      const key = ALIASES[title] ?? title;
      if (!facts) {
        absorb(key, sectionItems, REFRESHED.has(key));
        continue;
      }
      const foldsHere = key === SECTION.done;
      const items = foldsHere ? sectionItems.filter((item) => fileChanges(item) === 0) : sectionItems;
      if (foldsHere) folded += sectionItems.reduce((sum, item) => sum + fileChanges(item), 0);
      // a split turn's request was the latest request when its summary was made
      const asWritten = title === SECTION.originalRequest ? items.map((item) => `${LATEST_REQUEST}${item}`) : items;
      const placed = asWritten.flatMap((item, i) => {
        const now = olderItem(key, item, facts, changed, n === 0 && i === 0 && title === SECTION.goal);
        return now ? [now] : [];
      });
      const here = placed.filter(([at]) => at === key).map(([, text]) => text);
      absorb(key, here, REFRESHED.has(key));
      for (const [at, text] of placed) if (at !== key) absorb(at, [text], false);
    }
  }
  if (folded > 0) merged.set(SECTION.done, [earlierChanges(folded), ...(merged.get(SECTION.done) ?? [])]);
  for (const [title, items] of current) absorb(ALIASES[title] ?? title, items, REFRESHED.has(title));
  // questions passed over stay open, the newest few: nothing tells when one was answered later
  const critical = merged.get(SECTION.critical) ?? [];
  const passed = critical.filter((item) => item.startsWith(NOT_ANSWERED));
  if (passed.length > MAX_OPEN_QUESTIONS) {
    const dropped = new Set(passed.slice(0, passed.length - MAX_OPEN_QUESTIONS));
    merged.set(SECTION.critical, critical.filter((item) => !dropped.has(item)));
  }
  return merged;
}
