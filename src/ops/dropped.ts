/**
 * What each compaction on a branch dropped: the facts of the span it summarized (requests, files
 * changed, errors still open, identifiers, constraints and decisions that still held, the open
 * question; the same extraction and lifecycle as the coverage check and `bonsai eval`) that its
 * summary does not mention, each linked to the entry it first appears in (verbatim, else up to
 * case, markup and spacing). The operation behind
 * `bonsai context --dropped`. Nothing is written.
 */
import { summarizedRange } from "../format/context.js";
import type { SessionEntry } from "../format/entry-types.js";
import { messageFromEntry } from "../format/entry-messages.js";
import { convertToLlm } from "../messages/convert.js";
import { serializeConversation } from "../messages/serialize.js";
import { mentionedIn, normalizeForMatch } from "../summarizer/coverage.js";
import { type EvalFact, FACT_KINDS, type FactKind, transcriptFacts } from "./eval-facts.js";
import { readTarget, type SessionTarget, type WarningListener, withSession } from "./open-session.js";

export interface DroppedFact {
  kind: FactKind;
  text: string;
  /** the entry of the span the fact first appears in, verbatim, else up to case, markup and spacing (null when no single entry holds it) */
  entryId: string | null;
}

export interface CompactionDrops {
  compactionId: string;
  /** the entries it summarized: from the previous compaction's first kept entry (or the start) to its own */
  summarizedEntries: number;
  /** facts found in that span, and those the summary does not mention */
  facts: number;
  dropped: DroppedFact[];
}

/** Bump when what a span's facts are, or how they are matched, changes: it names the drops a cache keeps (view/source.ts). */
export const DROPS_FORMAT = 2;

const isDroppedFact = (value: unknown): value is DroppedFact => {
  const fact = value as DroppedFact | null;
  return typeof fact === "object" && fact !== null && FACT_KINDS.includes(fact.kind) && typeof fact.text === "string" && (fact.entryId === null || typeof fact.entryId === "string");
};

/** Whether `value` (read back from a cache) has the shape of CompactionDrops. */
export function isCompactionDrops(value: unknown): value is CompactionDrops {
  const drops = value as CompactionDrops | null;
  return (
    typeof drops === "object" &&
    drops !== null &&
    typeof drops.compactionId === "string" &&
    Number.isSafeInteger(drops.summarizedEntries) &&
    Number.isSafeInteger(drops.facts) &&
    Array.isArray(drops.dropped) &&
    drops.dropped.every(isDroppedFact)
  );
}

export interface DroppedReport {
  file: string;
  leafId: string | null;
  compactions: CompactionDrops[];
}

/** The entries a compaction at `at` on `path` summarized (earlier compactions left out). */
function summarizedSpan(path: readonly SessionEntry[], at: number): SessionEntry[] {
  const [start, end] = summarizedRange(path, at);
  return path.slice(start, end).filter((e) => e.type !== "compaction");
}

/**
 * The span as one transcript (what spanFacts reads: each entry's part, joined by blank lines) and
 * a finder of the first entry whose own text holds a fact: verbatim, as facts are mostly quoted
 * from the transcript, else up to case, markup and spacing (files and identifiers appear in tool
 * calls too). The entries are serialized once for both, each fact is one search of the whole span
 * instead of one per entry, and the span is normalized only for a fact not found verbatim.
 */
function spanTexts(span: readonly SessionEntry[]): { transcript: string; entryOf: (fact: EvalFact) => string | null } {
  const own = span.map((entry) => {
    const message = messageFromEntry(entry);
    return message ? serializeConversation(convertToLlm([message])) : "";
  });
  // the transcript is searched as it is: a fact on one line cannot reach across the blank line
  // between two entries' texts (one with a line break, which a text holds only escaped, is looked for normalized)
  const shown = own.flatMap((text, i) => (text === "" ? [] : [i]));
  const joined = joinedWithStarts(
    shown.map((i) => own[i]),
    "\n\n",
  );
  // normalized, NUL ends each entry's text: no fact holds one (normalizing keeps it), so no match spans two entries
  let normalized: { text: string; starts: number[] } | undefined;
  const entryOf = (fact: EvalFact): string | null => {
    if (!fact.text) return null;
    const at = fact.text.includes("\n") ? -1 : joined.text.indexOf(fact.text);
    if (at >= 0) return span[shown[lastAtOrBefore(joined.starts, at)]].id;
    normalized ??= joinedWithStarts(own.map(normalizeForMatch), "\0");
    const needle = normalizeForMatch(fact.text);
    const loose = needle ? normalized.text.indexOf(needle) : -1;
    return loose < 0 ? null : span[lastAtOrBefore(normalized.starts, loose)].id;
  };
  return { transcript: joined.text, entryOf };
}

/** `texts` joined by `separator`, with where each one starts. */
function joinedWithStarts(texts: readonly string[], separator: string): { text: string; starts: number[] } {
  const starts: number[] = [];
  let at = 0;
  for (const text of texts) {
    starts.push(at);
    at += text.length + separator.length;
  }
  return { text: texts.join(separator), starts };
}

/** The index of the last of the ascending `starts` at or before `at` (the first when none is). */
function lastAtOrBefore(starts: readonly number[], at: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (starts[mid] <= at) low = mid;
    else high = mid - 1;
  }
  return low;
}

/** The facts of the span the compaction at `at` on `path` summarized that its summary lost. */
export function droppedAt(path: readonly SessionEntry[], at: number): CompactionDrops {
  const entry = path[at];
  if (entry?.type !== "compaction") throw new Error(`entry ${at} of the path is not a compaction`);
  const span = summarizedSpan(path, at);
  const { transcript, entryOf } = spanTexts(span);
  const facts = transcriptFacts(transcript);
  const kept = mentionedIn(entry.summary);
  const dropped = facts.filter((fact) => !kept(fact.text)).map((fact) => ({ ...fact, entryId: entryOf(fact) }));
  return { compactionId: entry.id, summarizedEntries: span.length, facts: facts.length, dropped };
}

/** Each compaction on the path, oldest first, with the facts of its span its summary lost. */
export function droppedByCompactions(path: readonly SessionEntry[]): CompactionDrops[] {
  return path.flatMap((entry, at) => (entry.type === "compaction" ? [droppedAt(path, at)] : []));
}

export async function droppedReport(target: SessionTarget, options: { onWarning?: WarningListener } = {}): Promise<DroppedReport> {
  const opened = await readTarget(target, options.onWarning);
  return withSession(opened, async () => {
    const path = opened.session.getBranch();
    return { file: opened.file, leafId: opened.session.getLeafId(), compactions: droppedByCompactions(path) };
  });
}
