/**
 * What `bonsai chat` says when the session does something by itself: automatic compaction (and
 * why), retries, pruning, warnings, and the status line while something runs; and how a
 * compaction the user asked for ended. Pure: events and numbers in, display blocks and lines out.
 */
import { nativeLine } from "../summarizer/native-lane.js";
import { CompactionError } from "../agent/compaction-run.js";
import type { AgentSessionEvent, AutoCompactionReason, SessionCompactionResult } from "../agent/events.js";
import type { ContextUsage } from "../agent/overflow.js";
import { compactionThreshold, type ThresholdSettings } from "../compaction/settings.js";
import { errorText } from "../util/error-text.js";
import { isConnectionError } from "./connection-error.js";
import { formatTokens } from "./footer.js";
import type { BusyReason } from "./queue.js";
import type { DisplayBlock } from "./transcript.js";
import { formatCount } from "../util/count.js";

/**
 * The spinner's line: what runs, and that Escape stops it. Undefined when idle. `thinking` says
 * the model is in the middle of a thinking block, so the user knows the wait is not a hang.
 * `elapsedSeconds` is how long it has run, shown from the first second on.
 */
export function statusLine(
  autoCompaction: AutoCompactionReason | undefined,
  busy: BusyReason | undefined,
  thinking = false,
  elapsedSeconds = 0,
): string | undefined {
  const line = busyText(autoCompaction, busy, thinking);
  if (line === undefined || elapsedSeconds < 1) return line;
  return `${line} · ${formatElapsed(elapsedSeconds)}`;
}

function busyText(autoCompaction: AutoCompactionReason | undefined, busy: BusyReason | undefined, thinking: boolean): string | undefined {
  if (autoCompaction === "overflow") return "Context overflow detected, Auto-compacting… (esc to cancel)";
  if (autoCompaction === "threshold") return "Auto-compacting… (esc to cancel)";
  if (busy === "compacting") return "Compacting… (esc to cancel)";
  if (busy === "summarizing") return "Summarizing the branch… (esc to cancel)";
  if (busy === "answering") return thinking ? "Thinking… (esc to stop)" : "Working… (esc to stop)";
  return undefined;
}

/** "12s", "1m 15s" */
export function formatElapsed(seconds: number): string {
  const s = Math.floor(seconds);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${s % 60}s`;
}

/**
 * Why an automatic compaction starts, with the numbers behind the threshold: the one the session
 * compacts at (compactionThreshold: the reply reserve scaled to small windows, a percentage or a
 * fixed size when set), never a second computation that could say another number.
 */
export function autoCompactionStartText(reason: AutoCompactionReason, usage: ContextUsage | undefined, settings: ThresholdSettings): string {
  if (reason === "overflow") return "Context overflow detected: the model refused the prompt as too long. Compacting, then retrying the turn.";
  if (!usage || usage.tokens === null) return "Auto-compacting: the context passed the threshold.";
  const threshold = compactionThreshold(usage.contextWindow, settings);
  return `Auto-compacting: the context (${formatTokens(usage.tokens)} tokens) passed the threshold of ${formatTokens(threshold)} in a ${formatTokens(usage.contextWindow)}-token window.`;
}

type EndEvent = Extract<AgentSessionEvent, { type: "auto_compaction_end" }>;

/**
 * What a compaction did, the same words for automatic and manual ones; `focus` names its
 * instructions. `tokensBefore` is the whole context before the compaction (older history and the
 * part kept verbatim), so it is said as such, not as the amount summarized.
 */
function compactedText(result: SessionCompactionResult, focus = ""): string {
  // a provider's own compaction says what it cost against what it saved
  const native = nativeLine((result.details as { native?: unknown } | undefined)?.native);
  const how = native ? ` (provider-native, ${native})` : "";
  return `${formatCount(result.tokensBefore)} tokens of context${focus}; kept from entry ${result.firstKeptEntryId}${how}`;
}

/** How an automatic compaction ended: done (and whether the turn is retried), cancelled, failed, or nothing to do. */
export function autoCompactionEndBlock(event: EndEvent): DisplayBlock {
  if (event.result) {
    const then = event.willRetry ? "; retrying the turn" : "";
    return { style: "success", text: `✓ Auto-compaction (${event.reason}): ${compactedText(event.result)}${then}.` };
  }
  if (event.aborted) return { style: "warning", text: "Auto-compaction cancelled." };
  if (event.errorMessage) {
    const reason = event.errorMessage.replace(/^Auto-compaction failed: /, "");
    return { style: "warning", text: `Auto-compaction failed; continuing without compaction: ${reason}` };
  }
  return { style: "notice", text: "Auto-compaction found nothing to compact." };
}

/** /compact done; `instructions` are the focus it was given. */
export function compactedBlock(result: SessionCompactionResult, instructions: string | undefined): DisplayBlock {
  const focus = instructions ? ` with the instructions "${instructions}"` : "";
  return { style: "success", text: `✓ Compacted: ${compactedText(result, focus)}.` };
}

/** /compact did not store a compaction: cancelled (Escape or a hook), or failed. */
export function compactionFailedBlock(error: unknown): DisplayBlock {
  if (error instanceof CompactionError && error.code === "cancelled") return { style: "warning", text: "Compaction cancelled." };
  // nothing failed: the plan found nothing to summarize, and its message says why
  if (error instanceof CompactionError && (error.code === "nothing-to-compact" || error.code === "already-compacted")) {
    return { style: "notice", text: error.code === "already-compacted" ? "Already compacted: nothing was added since the last compaction." : error.message };
  }
  return { style: "error", text: `Compaction failed: ${errorText(error)}` };
}

/**
 * The one-line notices of retries, pruning, warnings and hook failures; undefined for other events.
 * `describeError` words a model error (a connection error as the URL and its cause): a retry
 * after a connection error only counts down, as the failed answer already said what happened.
 */
export function noticeBlock(event: AgentSessionEvent, describeError: (message: string) => string = (m) => m): DisplayBlock | undefined {
  switch (event.type) {
    case "auto_retry_start": {
      const left = event.maxAttempts - event.attempt + 1;
      const what = isConnectionError(event.errorMessage) ? "" : `: ${describeError(event.errorMessage)}`;
      return { style: "warning", text: `Retrying in ${(event.delayMs / 1000).toFixed(1)} s (${plural(left, "retry", "retries")} left)${what}` };
    }
    case "auto_retry_end":
      if (event.success) return undefined;
      if (isConnectionError(event.finalError ?? "")) return { style: "error", text: `Gave up after ${plural(event.attempt, "retry", "retries")}.` };
      return { style: "error", text: `Gave up after ${plural(event.attempt, "retry", "retries")}: ${describeError(event.finalError ?? "unknown error")}` };
    case "compaction_retry":
      return {
        style: "notice",
        text: `Summarizer ${event.summarizer} failed (${event.errorMessage}); ${event.action === "retry" ? "retrying" : "trying the next model"}.`,
      };
    case "session_pruned":
      return {
        style: "notice",
        text: `Pruned ${event.prunedCount} old tool outputs (~${formatCount(event.tokensSaved)} tokens; the file keeps the originals).`,
      };
    case "warning":
      return { style: "warning", text: event.message };
    case "hook_error":
      return { style: "warning", text: `Hook ${event.event} #${event.index} failed: ${event.error}` };
    default:
      return undefined;
  }
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
