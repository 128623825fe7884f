/**
 * Pruning a stored session without losing anything (docs/ARCHITECTURE.md, storage decisions):
 * before a tool result's content is replaced by its notice, the original goes to the session's
 * archive of pruned tool output, one record per line, written before the session is rewritten.
 * Where the archive is and how it is written belongs to the store (a `<session>.pruned.jsonl`
 * sidecar synced beside a file, a table in a database: storage/types.ts StoreArchive); this
 * module reaches it through the session only. Restoring puts the originals back.
 */
import type { ImageContent, TextContent, ToolResultMessage } from "../format/message-types.js";
import { contextFromPath, entriesInContext } from "../format/context.js";
import { entriesAsShown, pruneByEdits, restoreByEdits } from "./prune-edits.js";
import type { SessionManager } from "../session/manager.js";
import type { SessionEntry } from "../format/entry-types.js";
import { validateEntry } from "../format/validate.js";
import { prunedArchivePath, readSidecar } from "../storage/archive.js";
import { toJsonLines } from "../format/lines.js";
import type { StoreArchive, StoredLines } from "../storage/types.js";
import { DEFAULT_PRUNE_CONFIG, type PruneCandidate, type PruneConfig, planPruning, prunedToolResult } from "../compaction/prune.js";
import { estimateMessagesTokens } from "../compaction/tokens.js";
import { planSavings, type SavingCandidate, type SavingsConfig } from "../compaction/prune-savings.js";

// the sidecar's name belongs to the storage layer, which copies archives between stores
export { prunedArchivePath };

export interface PrunedRecord {
  entryId: string;
  /** ms epoch, equal to the entry's `prunedAt` */
  prunedAt: number;
  toolName: string;
  toolCallId: string;
  /** estimated tokens of the original */
  tokens: number;
  /** the original content */
  content: (TextContent | ImageContent)[];
  /**
   * The entry's whole line as it was stored, when serializing the entry does not give that line
   * back (numbers beyond a double, escapes, spacing, key order: docs/ARCHITECTURE.md, storage
   * decisions); restoring then puts the line back byte for byte.
   */
  line?: string;
}

/**
 * Every readable record of a session file's sidecar `archivePath`, oldest first; unreadable lines
 * (a torn last line) are reported and skipped.
 */
export function readPrunedRecords(archivePath: string, onWarning?: (message: string) => void): PrunedRecord[] {
  return parsePrunedRecords(readSidecar(archivePath), archivePath, onWarning);
}

/** The records among an archive's lines; `where` names the archive in warnings. */
function parsePrunedRecords(stored: StoredLines, where: string, onWarning?: (message: string) => void): PrunedRecord[] {
  const records: PrunedRecord[] = [];
  stored.lines.forEach((line, i) => {
    if (!line.trim()) return;
    try {
      const record = JSON.parse(line) as PrunedRecord;
      if (typeof record.entryId === "string" && Array.isArray(record.content)) records.push(record);
      else onWarning?.(`${where}:${i + 1}: not a pruned-output record, skipped`);
    } catch {
      onWarning?.(`${where}:${i + 1}: unreadable line, skipped`);
    }
  });
  if (stored.tornTail) onWarning?.(`${where}:${stored.tornTail.line}: unreadable line, skipped`);
  return records;
}

/**
 * The entries of a session's branch whose messages are in its context: pruning anything older
 * saves nothing. Read from the end of the branch the context starts on, so a check every turn
 * costs what the context holds, not what the session does.
 */
export const branchEntriesInContext = (session: SessionManager): SessionEntry[] =>
  session.getDialect().contextEdits ? entriesAsShown(session) : entriesInContext(session.getContextBranch(), session.getDialect());

export interface PruneSessionOptions {
  config?: Partial<PruneConfig>;
  /** plan only: nothing is archived or rewritten */
  dryRun?: boolean;
  /** the time recorded as prunedAt (default: the clock) */
  now?: number;
  /**
   * An agent's turn: where the dialect has no context edits, the replacements go only into the
   * session in memory, so what the next requests send is pruned, while the file keeps every
   * original and is not rewritten (a later rewrite writes the originals). Without it, `bonsai
   * prune`'s way: archived and rewritten.
   */
  requestOnly?: boolean;
}

export interface PruneSessionResult {
  prunedCount: number;
  tokensSaved: number;
  /** estimated context tokens before and after */
  contextTokensBefore: number;
  contextTokensAfter: number;
  candidates: PruneCandidate[];
  /** where the originals went; undefined for an in-memory session, a dry run, or context edits */
  archivePath?: string;
  dryRun: boolean;
  /** pruned (or, on a dry run, would be) by appending context edits rather than rewriting */
  contextEdits: boolean;
  /** pruned in memory only (requestOnly where the dialect has no context edits): the file keeps the originals */
  requestOnly: boolean;
}

const estimateContext = (session: SessionManager): number => estimateMessagesTokens(contextFromPath(session.getContextBranch(), session.getDialect()).messages);

/**
 * Prunes old tool output on the session's current branch. The originals are archived and synced
 * first, then the session file is rewritten atomically; nothing is written when nothing qualifies.
 * An in-memory session has no file to archive next to: its originals are simply replaced.
 */
export function pruneSession(session: SessionManager, options: PruneSessionOptions = {}): PruneSessionResult {
  const config = { ...DEFAULT_PRUNE_CONFIG, ...options.config };
  const contextTokensBefore = estimateContext(session);
  const entries = branchEntriesInContext(session);
  const plan = planPruning(entries, config);
  const result: PruneSessionResult = {
    prunedCount: plan.candidates.length,
    tokensSaved: plan.tokensSaved,
    contextTokensBefore,
    contextTokensAfter: contextTokensBefore - plan.tokensSaved,
    candidates: plan.candidates,
    dryRun: options.dryRun === true,
    contextEdits: session.getDialect().contextEdits,
    requestOnly: options.requestOnly === true && !session.getDialect().contextEdits,
  };
  if (options.dryRun || plan.candidates.length === 0) return result;
  result.archivePath = replaceOutputs(session, entries, plan.candidates, options.now ?? Date.now(), result.requestOnly);
  result.contextTokensAfter = estimateContext(session);
  return result;
}

export interface SavingsResult {
  prunedCount: number;
  tokensSaved: number;
  candidates: SavingCandidate[];
  archivePath?: string;
}

/**
 * The free savings before a summary (compaction/prune-savings.ts): superseded reads become
 * notices pointing at the newer entry, oversized results keep their head and tail. Archived
 * and rewritten like pruneSession, so `restorePrunedOutputs` puts them back.
 */
export function applySavings(session: SessionManager, options: { config?: Partial<SavingsConfig>; now?: number; requestOnly?: boolean } = {}): SavingsResult {
  const entries = branchEntriesInContext(session);
  const candidates = planSavings(entries, options.config);
  const result: SavingsResult = { prunedCount: candidates.length, tokensSaved: candidates.reduce((sum, c) => sum + c.savings, 0), candidates };
  if (candidates.length === 0) return result;
  result.archivePath = replaceOutputs(session, entries, candidates, options.now ?? Date.now(), options.requestOnly === true);
  return result;
}

type Replaceable = PruneCandidate & { content?: TextContent[] };

/**
 * Where the agent reads context edits, appends them (ops/prune-edits.ts): nothing is rewritten or
 * archived. Elsewhere, `requestOnly`, replaces them in memory only; else archives the originals
 * and rewrites the session. Returns the archive's location.
 */
function replaceOutputs(session: SessionManager, entries: readonly SessionEntry[], candidates: readonly Replaceable[], prunedAt: number, requestOnly: boolean): string | undefined {
  if (session.getDialect().contextEdits) pruneByEdits(session, entries, candidates, prunedAt);
  else if (requestOnly) {
    // an older format is written at the first write, from the entries in memory: written now, while they hold the originals
    session.persistMigration();
    replaceInMemory(session, entries, candidates, prunedAt);
  } else return archiveAndReplace(session, entries, candidates, prunedAt);
  return undefined;
}

/** What a candidate's tool result becomes: its own `content` (a saving), else the standard notice. */
const replacementOf = (candidate: Replaceable, message: ToolResultMessage, prunedAt: number): ToolResultMessage =>
  candidate.content ? { ...message, content: candidate.content, prunedAt } : prunedToolResult(message, candidate.tokens, prunedAt);

/**
 * Replaces the candidates in the session in memory, each with its line as the store holds it as
 * the line a rewrite writes: the model is sent the notices, the file keeps the originals, and
 * nothing is written now (the next open reads the originals, and the agent prunes them again).
 */
function replaceInMemory(session: SessionManager, entries: readonly SessionEntry[], candidates: readonly Replaceable[], prunedAt: number): void {
  const stored = session.getStoredLines(candidates.map((c) => c.entryId));
  const held = prunedInMemory.get(session) ?? new Map<string, HeldOriginal>();
  prunedInMemory.set(session, held);
  candidates.forEach((candidate, i) => {
    const entry = entries[candidate.index] as SessionEntry & { message: ToolResultMessage };
    // an entry appended in this process was written as it serializes
    const line = stored[i] ?? JSON.stringify(entry);
    held.set(candidate.entryId, { prunedAt, message: entry.message, line }); // before the entry holds the replacement
    session.replaceMessage(candidate.entryId, replacementOf(candidate, entry.message, prunedAt), line);
  });
}

/** An original replaced in memory only, and its line in the store: what restorePrunedOutputs puts back. */
interface HeldOriginal {
  prunedAt: number;
  message: ToolResultMessage;
  line: string;
}
const prunedInMemory = new WeakMap<object, Map<string, HeldOriginal>>();

/** The contents of the tool results `session` pruned in memory only, by entry id: originals no archive holds (history_read reads them). */
export function originalsPrunedInMemory(session: object): Map<string, (TextContent | ImageContent)[]> {
  return new Map([...(prunedInMemory.get(session) ?? [])].map(([id, held]) => [id, held.message.content]));
}

/**
 * Archives the candidates' originals (synced first), then swaps in their replacement (a
 * candidate's own `content`, else the standard notice) and rewrites the session. Returns the
 * archive's location; undefined in memory.
 */
function archiveAndReplace(session: SessionManager, entries: readonly SessionEntry[], candidates: readonly Replaceable[], prunedAt: number): string | undefined {
  const originals = candidates.map((c) => ({
    candidate: c,
    message: (entries[c.index] as SessionEntry & { message: ToolResultMessage }).message,
  }));
  // Replacing a message by itself changes nothing but throws for a read-only session: refuse
  // before anything is archived.
  for (const { candidate, message } of originals) session.replaceMessage(candidate.entryId, message);
  const stored = session.getStoredLines(originals.map(({ candidate }) => candidate.entryId));
  const records: PrunedRecord[] = originals.map(({ candidate, message }, i) => {
    const line = stored[i];
    return {
      entryId: candidate.entryId,
      prunedAt,
      toolName: message.toolName,
      toolCallId: message.toolCallId,
      tokens: candidate.tokens,
      content: message.content,
      // most lines are what JSON.stringify writes, and restoring the content rebuilds them
      ...(line !== undefined && line !== JSON.stringify(entries[candidate.index]) ? { line } : {}),
    };
  });
  const archive = archiveOf(session);
  if (archive) archive.append(toJsonLines(records));
  replaceAndPersist(
    session,
    originals.map(({ candidate, message }) => ({
      entryId: candidate.entryId,
      before: message,
      after: replacementOf(candidate, message, prunedAt),
    })),
  );
  return archive?.location;
}

/**
 * The session's archive, whatever its store; undefined in memory, where there is nowhere to
 * archive to. It exists only while the session is open for writing.
 */
function archiveOf(session: SessionManager): StoreArchive | undefined {
  if (!session.isPersisted()) return undefined;
  const archive = session.getPrunedArchive();
  if (!archive) throw new Error(`${session.getLocation()}: session was opened read-only`);
  return archive;
}

/** A message swap; `line` is the line to store the entry as (an archived original), when there is one. */
interface MessageChange {
  entryId: string;
  before: ToolResultMessage;
  after: ToolResultMessage;
  line?: string;
}

/** Swaps messages and rewrites the file; if the rewrite fails, memory goes back to match the file. */
function replaceAndPersist(session: SessionManager, changes: readonly MessageChange[]): void {
  for (const change of changes) session.replaceMessage(change.entryId, change.after, change.line);
  try {
    session.rewriteFile();
  } catch (error) {
    for (const change of changes) session.replaceMessage(change.entryId, change.before);
    throw error;
  }
}

/**
 * The archived line of `record` and its message, when the record has one from the prune that
 * made `pruned` (same prunedAt) and it is that tool result's line; else the content is restored.
 */
function originalLine(record: PrunedRecord, pruned: ToolResultMessage): { line: string; message: ToolResultMessage } | undefined {
  // JSON may hold a newline between values, a session line may not
  if (typeof record.line !== "string" || record.prunedAt !== pruned.prunedAt || record.line.includes("\n")) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(record.line);
  } catch {
    return undefined;
  }
  if (validateEntry(value, true)) return undefined;
  const entry = value as SessionEntry;
  if (entry.id !== record.entryId || entry.type !== "message" || entry.message.role !== "toolResult") return undefined;
  return { line: record.line, message: entry.message };
}

export interface RestoreResult {
  restored: string[];
  /** requested ids that are not pruned or have no archived original */
  notRestored: { entryId: string; reason: string }[];
}

/**
 * Puts archived originals back into pruned tool results (all of them, or `entryIds`), then
 * rewrites the session atomically. The archive is left as it is, so a later prune can archive again.
 * Results pruned in memory only (requestOnly) get their originals back in memory: the file holds them.
 */
export function restorePrunedOutputs(
  session: SessionManager,
  options: { entryIds?: readonly string[]; onWarning?: (message: string) => void } = {},
): RestoreResult {
  if (session.getDialect().contextEdits) return restoreByEdits(session, options.entryIds);
  const archive = archiveOf(session);
  const archived = archive ? parsePrunedRecords(archive.stored(), archive.location, options.onWarning) : [];
  // the records of each entry, newest last: only one from the prune that made the entry as it is
  // (same prunedAt, same tool call) restores it; another session's archive (an interrupted copy)
  // or an older prune must not
  const candidates = new Map<string, PrunedRecord[]>();
  for (const record of archived) {
    const records = candidates.get(record.entryId);
    if (records) records.push(record);
    else candidates.set(record.entryId, [record]);
  }

  // originals held in memory, while the store still holds their lines (not in a fork written since, say)
  const all = prunedInMemory.get(session) ?? new Map<string, HeldOriginal>();
  const heldLines = session.getStoredLines([...all.keys()]);
  const held = new Map([...all].filter(([, original], i) => heldLines[i] === original.line));
  const wanted = options.entryIds ?? [...new Set([...candidates.keys(), ...held.keys()])];
  const result: RestoreResult = { restored: [], notRestored: [] };
  const changes: MessageChange[] = [];
  const inMemory: MessageChange[] = [];
  for (const entryId of wanted) {
    const entry = session.getEntry(entryId);
    const pruned = entry?.type === "message" && entry.message.role === "toolResult" ? entry.message : undefined;
    const record = pruned && (candidates.get(entryId) ?? []).findLast((r) => r.prunedAt === pruned.prunedAt && r.toolCallId === pruned.toolCallId);
    const original = pruned && held.get(entryId);
    if (entry?.type !== "message" || entry.message.role !== "toolResult") {
      result.notRestored.push({ entryId, reason: entry ? "not a tool result" : "no such entry" });
    } else if (entry.message.prunedAt === undefined) {
      if (options.entryIds) result.notRestored.push({ entryId, reason: "not pruned" });
    } else if (original && original.prunedAt === entry.message.prunedAt) {
      inMemory.push({ entryId, before: entry.message, after: original.message, line: original.line });
      all.delete(entryId);
      result.restored.push(entryId);
    } else if (!record) {
      const other = candidates.has(entryId);
      result.notRestored.push({ entryId, reason: other ? "the archived original is of another prune or session; not restored" : "no archived original" });
    } else {
      const original = originalLine(record, entry.message);
      const { prunedAt: _pruned, ...rest } = entry.message;
      changes.push({ entryId, before: entry.message, after: original?.message ?? { ...rest, content: record.content }, line: original?.line });
      result.restored.push(entryId);
    }
  }
  for (const change of inMemory) session.replaceMessage(change.entryId, change.after, change.line);
  if (changes.length > 0) replaceAndPersist(session, changes);
  return result;
}
