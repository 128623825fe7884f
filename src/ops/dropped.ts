/**
 * What each compaction on a branch dropped: the facts of the span it summarized (requests, files
 * changed, errors still open, identifiers, constraints and decisions that still held, the open
 * question; the same extraction and lifecycle as the coverage check and `bonsai eval`) that its
 * summary does not mention, each linked to the entry it first appears in. The operation behind
 * `bonsai context --dropped`. Nothing is written.
 */
import { summarizedRange } from "../format/context.js";
import type { SessionEntry } from "../format/entry-types.js";
import { messageFromEntry } from "../format/entry-messages.js";
import { convertToLlm } from "../messages/convert.js";
import { serializeConversation } from "../messages/serialize.js";
import { mentionedIn, normalizeForMatch } from "../summarizer/coverage.js";
import { type EvalFact, type FactKind, spanFacts } from "./eval-facts.js";
import { readTarget, type SessionTarget, type WarningListener, withSession } from "./open-session.js";

export interface DroppedFact {
  kind: FactKind;
  text: string;
  /** the entry of the span the fact first appears in (null when no single entry holds it) */
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

/** The first entry whose own text holds the fact (files and identifiers appear in tool calls too). */
function entryOf(fact: EvalFact, span: readonly SessionEntry[], texts: Map<string, string>): string | null {
  const needle = normalizeForMatch(fact.text);
  for (const entry of span) {
    let text = texts.get(entry.id);
    if (text === undefined) {
      const message = messageFromEntry(entry);
      text = message ? normalizeForMatch(serializeConversation(convertToLlm([message]))) : "";
      texts.set(entry.id, text);
    }
    if (text.includes(needle)) return entry.id;
  }
  return null;
}

/** The facts of the span the compaction at `at` on `path` summarized that its summary lost. */
export function droppedAt(path: readonly SessionEntry[], at: number): CompactionDrops {
  const entry = path[at];
  if (entry?.type !== "compaction") throw new Error(`entry ${at} of the path is not a compaction`);
  const span = summarizedSpan(path, at);
  const messages = span.flatMap((e) => messageFromEntry(e) ?? []);
  const facts = spanFacts(messages);
  const texts = new Map<string, string>();
  const kept = mentionedIn(entry.summary);
  const dropped = facts.filter((fact) => !kept(fact.text)).map((fact) => ({ ...fact, entryId: entryOf(fact, span, texts) }));
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
