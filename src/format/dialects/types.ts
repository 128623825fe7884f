/**
 * A dialect is one agent's reading of the session format: which agent and version writes it, how
 * a file shows it (detect.ts), and that agent's context rule — which entries of a path the model
 * is sent and what becomes of them. One module per dialect, registered in DIALECTS (index.ts);
 * nothing outside format/dialects asks which dialect a session is in, it asks the dialect.
 */
import type { AgentMessage } from "../message-types.js";
import type { ModelRef, SessionEntry } from "../entry-types.js";

export type DialectName = "pi" | "pi-1" | "omp";

/** Where the parts of a context lie on a root-first path. */
export interface ContextSegments {
  /** index of the compaction whose summary opens the context; -1 when there is none */
  compaction: number;
  /** the kept entries are path[kept .. compaction): none when kept === compaction (always so for -1) */
  kept: number;
  /** the entries after the summary and the kept ones are path[start ..]: compaction + 1, or after a reset boundary */
  start: number;
}

/** A message of a context and the entry of the path it comes from (a compaction for its summary). */
export interface ProjectedMessage {
  index: number;
  message: AgentMessage;
}

export interface ContextSettings {
  thinkingLevel: string;
  model: ModelRef | null;
}

export interface Dialect {
  readonly name: DialectName;
  /** the agents and versions that write it, for people */
  readonly writtenBy: string;
  /** where the rule below was read: the agent, its version and the function */
  readonly ruleSource: string;
  /**
   * Which entries of a root-first path the context reads. Nothing before `kept` (before
   * `compaction` when it keeps none, before `start` when there is no compaction) is read, so a
   * caller holding parent links may pass just the path from there (session/context-memo.ts).
   */
  segments(path: readonly SessionEntry[]): ContextSegments;
  /**
   * The context's messages, given the path's segments, each with the entry it comes from: what
   * the agent leaves out (a context edit, a failed turn) is not there, and what it changes is
   * changed, so everything built on them (a summary of a span, of an abandoned branch) shows what
   * the agent showed and never brings back what it dropped.
   */
  project(path: readonly SessionEntry[], segments: ContextSegments): ProjectedMessage[];
  /**
   * Whether the agent reads `context_edit` entries: an earlier message changed by appending, so
   * pruning needs no rewrite of the file (ops/prune-edits.ts).
   */
  readonly contextEdits: boolean;
  /** The thinking level and model at the end of a path (read from all of it). */
  settings(path: readonly SessionEntry[]): ContextSettings;
  /**
   * Whether those are the latest set on the path, by a change entry or an assistant's reply, which
   * the session's index keeps per entry (session/index-node.ts) without reading the path.
   */
  readonly settingsFromLatest: boolean;
  /**
   * The fields this agent puts on a compaction it writes, besides the summary, the first kept
   * entry and the size: given the context the compaction replaces (asked only by a dialect that
   * needs it) and its time (ms).
   */
  compactionFields(context: () => readonly AgentMessage[], now: number): Record<string, unknown>;
  /**
   * What a branch summary's `fromId` holds when the leaf moves from `leftLeaf` to below
   * `destination` (null: a new root): the agents disagree ("root" stands for null).
   */
  branchSummaryFromId(destination: string | null, leftLeaf: string | null): string;
  /**
   * Whether the context below a leaf grows by each new entry's own message alone, so the last
   * context can be extended rather than rebuilt (session/context-memo.ts); `entry` is the new one.
   */
  appendsOnly(entry: { type: string; role?: string }): boolean;
}
