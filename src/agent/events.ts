/**
 * What an AgentSession tells its subscribers (UIs, SDK users) and what its hooks receive and may
 * return. Plain data types only.
 */
import type { AgentEvent } from "@mariozechner/pi-agent-core";
import type { CompactionResult } from "../compaction/compact.js";
import type { CompactionPreparation } from "../compaction/prepare.js";
import type { AgentMessage } from "../format/message-types.js";
import type { BeforeTreeResult, TreePreparation } from "../ops/navigate.js";
import type { BranchSummaryEntry, CompactionEntry, SessionEntry } from "../format/entry-types.js";

export type CompactionReason = "manual" | "threshold" | "overflow";
/** which method made a compaction's summary (`details.method`); "hook" when a hook supplied it */
export type CompactionMethodUsed = "native" | "remote" | "model" | "extractive" | "hook";
export type AutoCompactionReason = Exclude<CompactionReason, "manual">;

/** A compaction's result as stored: the summary, where the kept part starts, and hook data. */
export interface SessionCompactionResult extends Omit<CompactionResult, "details"> {
  details?: unknown;
  preserveData?: Record<string, unknown>;
}

/** A compaction a `session_before_compact` hook supplies instead of the summarizer's. */
export interface HookCompaction {
  summary: string;
  shortSummary?: string;
  /** must be an entry on the current branch */
  firstKeptEntryId: string;
  tokensBefore: number;
  details?: unknown;
  preserveData?: Record<string, unknown>;
}

export interface BeforeCompactResult {
  /** stop the compaction (manual: compact() rejects with "Compaction cancelled") */
  cancel?: boolean;
  /** use this instead of summarizing; validated before it is stored */
  compaction?: HookCompaction;
}

export interface CompactingResult {
  /** lines added to the summary prompt as additional context (results of all hooks combine) */
  context?: string[];
  /** replaces the history summary's instructions (the last hook's wins) */
  prompt?: string;
  /** stored on the compaction entry (merged across hooks, later keys win) */
  preserveData?: Record<string, unknown>;
}

export type SessionHookEvents = {
  session_before_compact: {
    payload: {
      reason: CompactionReason;
      preparation: CompactionPreparation;
      branchEntries: SessionEntry[];
      customInstructions?: string;
      /** true for a compaction inside a turn, between tool calls */
      midTurn?: boolean;
    };
    result: BeforeCompactResult;
  };
  "session.compacting": {
    payload: { sessionId: string; reason: CompactionReason; messages: AgentMessage[]; midTurn?: boolean };
    result: CompactingResult;
  };
  session_compact: {
    payload: { reason: CompactionReason; compactionEntry: CompactionEntry; fromExtension: boolean; midTurn?: boolean };
    result: undefined;
  };
  session_before_tree: { payload: { preparation: TreePreparation }; result: BeforeTreeResult };
  session_tree: {
    payload: {
      newLeafId: string | null;
      oldLeafId: string | null;
      summaryEntry?: BranchSummaryEntry;
      fromExtension?: boolean;
    };
    result: undefined;
  };
};

export type SessionHookName = keyof SessionHookEvents;

export type AgentSessionEvent =
  | AgentEvent
  /** `midTurn` (only when true): inside a turn, before the next model call */
  | { type: "auto_compaction_start"; reason: AutoCompactionReason; midTurn?: boolean }
  | {
      type: "auto_compaction_end";
      reason: AutoCompactionReason;
      result?: SessionCompactionResult;
      /** which method made the summary, with a result */
      method?: CompactionMethodUsed;
      aborted: boolean;
      willRetry: boolean;
      errorMessage?: string;
      midTurn?: boolean;
    }
  /** automatic compaction stopped after failures in a row; a successful manual compaction resumes it */
  | { type: "auto_compaction_paused"; failures: number; message: string }
  /** a summary made ahead of the threshold: started, ready, used at the threshold, dropped or failed */
  | { type: "background_summary"; status: "started" | "ready" | "used" | "dropped" | "failed"; detail?: string }
  | { type: "auto_retry_start"; attempt: number; maxAttempts: number; delayMs: number; errorMessage: string }
  | { type: "auto_retry_end"; success: boolean; attempt: number; finalError?: string }
  /** a summarizer call failed; the compaction waits and retries, or moves to the next model */
  | {
      type: "compaction_retry";
      summarizer: string;
      attempt: number;
      errorMessage: string;
      action: "retry" | "next-candidate";
      delayMs?: number;
    }
  /**
   * old tool output pruned; `kind: "savings"` for superseded reads and oversized results, with
   * their counts. The file keeps the originals: a turn appends context edits, or changes only what
   * is sent (ops/prune.ts requestOnly); only `bonsai prune` archives and rewrites
   */
  | { type: "session_pruned"; tokensSaved: number; prunedCount: number; kind?: "savings"; superseded?: number; oversized?: number }
  | { type: "hook_error"; event: string; index: number; error: string }
  /** something went wrong that did not stop the session (a short summary failed, a compaction freed nothing) */
  | { type: "warning"; message: string };

export type AgentSessionListener = (event: AgentSessionEvent) => void;
