/**
 * What each compaction on a branch dropped: the facts of the span it summarized (requests, files
 * changed, errors still open, identifiers, constraints and decisions that still held, the open
 * question; the same extraction and lifecycle as the coverage check and `bonsai eval`) that its
 * summary does not mention, each linked to the entry it was taken from (the request that named an
 * identifier, the call that wrote a file, the result that failed). The operation behind
 * `bonsai context --dropped`. Nothing is written.
 */
import { summarizedRange } from "../format/context.js";
import type { SessionEntry } from "../format/entry-types.js";
import { messageFromEntry } from "../format/entry-messages.js";
import { convertToLlm } from "../messages/convert.js";
import { serializeConversation } from "../messages/serialize.js";
import { mentionedIn } from "../summarizer/coverage.js";
import { parseLayout, type TranscriptPart } from "../summarizer/extractive-parse.js";
import { FACT_KINDS, type FactKind, partFacts } from "./eval-facts.js";
import { readTarget, type SessionTarget, type WarningListener, withSession } from "./open-session.js";

export interface DroppedFact {
  kind: FactKind;
  text: string;
  /** the entry of the span the fact was taken from (older versions searched for it, and wrote null when no entry held it alone) */
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
export const DROPS_FORMAT = 3;

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
 * The span's transcript parts (what serializeConversation writes for each entry, read back in its
 * own layout: the span is bonsai's serialization, never a model's markup) and the entry each part
 * belongs to. Each entry is read on its own, so no part reaches across two entries.
 */
function spanParts(span: readonly SessionEntry[]): { parts: TranscriptPart[]; entryOfPart: number[] } {
  const parts: TranscriptPart[] = [];
  const entryOfPart: number[] = [];
  span.forEach((entry, i) => {
    const message = messageFromEntry(entry);
    if (!message) return;
    for (const part of parseLayout(serializeConversation(convertToLlm([message])))) {
      parts.push(part);
      entryOfPart.push(i);
    }
  });
  return { parts, entryOfPart };
}

/** The facts of the span the compaction at `at` on `path` summarized that its summary lost. */
export function droppedAt(path: readonly SessionEntry[], at: number): CompactionDrops {
  const entry = path[at];
  if (entry?.type !== "compaction") throw new Error(`entry ${at} of the path is not a compaction`);
  const span = summarizedSpan(path, at);
  const { parts, entryOfPart } = spanParts(span);
  const facts = partFacts(parts);
  const kept = mentionedIn(entry.summary);
  const dropped = facts.filter((fact) => !kept(fact.text)).map(({ kind, text, part }) => ({ kind, text, entryId: span[entryOfPart[part]]?.id ?? null }));
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
