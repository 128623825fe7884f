/**
 * Making room in the context, the one way every automatic compaction goes (docs/ARCHITECTURE.md,
 * decision 5): first the free savings (superseded reads, oversized results: no summary, often
 * enough), then, unless the breaker has paused automatic compaction, a compaction that starts
 * from the background summary when one is ready, then the progress guard. Failures count
 * towards the breaker; the third in a row pauses automatic compaction and says so.
 */
import type { Settings } from "../config/settings.js";
import type { SessionManager } from "../session/manager.js";
import type { AgentContext } from "./agent-context.js";
import type { BackgroundSummary } from "./background-summary.js";
import { type AutoCompactionEnd, type CompactionOutcome, type CompactionRunContext, runAutoCompaction } from "./compaction-run.js";
import { BREAKER_LIMIT, type CompactionBreaker, type ContextPressure, contextTokensNow, madeProgress, progressWarning } from "./context-pressure.js";
import type { AgentSessionEvent, AutoCompactionReason } from "./events.js";
import type { SavingsStep } from "./session-prune.js";

export const PAUSED_MESSAGE = `Automatic compaction paused after ${BREAKER_LIMIT} failed compactions in a row; compact manually (/compact) to resume it`;

export interface RoomMakerOptions {
  context: AgentContext;
  sessionManager: SessionManager;
  settings: Settings;
  savings: SavingsStep;
  emit: (event: AgentSessionEvent) => void;
  breaker: CompactionBreaker;
  background: BackgroundSummary;
  runContext: () => CompactionRunContext;
  /** runs an automatic compaction as the one in progress */
  track: (start: (signal: AbortSignal) => Promise<AutoCompactionEnd>) => Promise<AutoCompactionEnd>;
  /** aborts an automatic compaction still running */
  abortAuto: () => void;
}

export interface Room {
  /** the agent's context was rebuilt (savings or a compaction) */
  changed: boolean;
  /** the context is now within the threshold without a compaction (savings sufficed) */
  enough: boolean;
  compacted: boolean;
  /** the compaction passed the progress guard */
  progress: boolean;
  outcome?: CompactionOutcome;
}

export interface RoomRequest {
  reason: AutoCompactionReason;
  willRetry: boolean;
  midTurn?: boolean;
}

const NO_ROOM = { enough: false, compacted: false, progress: false } as const;

export class RoomMaker {
  constructor(private readonly options: RoomMakerOptions) {}

  async make(pressure: ContextPressure, request: RoomRequest): Promise<Room> {
    const { context, emit, breaker } = this.options;
    let changed = false;
    let tokens = pressure.tokens;
    const saved = this.options.savings();
    if (saved) {
      context.refresh();
      changed = true;
      emit({ type: "session_pruned", kind: "savings", ...saved });
      tokens = Math.max(0, tokens - saved.tokensSaved);
      // An overflow's size is unknown (the request failed): it always compacts.
      if (request.reason !== "overflow" && tokens <= pressure.threshold) return { changed, enough: true, compacted: false, progress: true };
    }
    if (breaker.open) {
      if (request.reason === "overflow") {
        emit({ type: "auto_compaction_start", reason: "overflow" });
        const errorMessage = `Context overflow recovery failed: ${PAUSED_MESSAGE}`;
        emit({ type: "auto_compaction_end", reason: "overflow", aborted: false, willRetry: false, errorMessage });
      }
      return { changed, ...NO_ROOM };
    }
    this.options.abortAuto();
    const end = await this.options.track((signal) =>
      runAutoCompaction(this.options.runContext(), request.reason, request.willRetry, signal, {
        midTurn: request.midTurn,
        ready: () => this.options.background.take(pressure.threshold),
      }),
    );
    if (!end.outcome) {
      if (!end.aborted && breaker.failed()) {
        emit({ type: "auto_compaction_paused", failures: breaker.failuresInARow, message: PAUSED_MESSAGE });
        emit({ type: "warning", message: PAUSED_MESSAGE });
      }
      return { changed, ...NO_ROOM };
    }
    breaker.succeeded(false);
    const after = contextTokensNow(context.messages);
    const progress = madeProgress(after, pressure.threshold);
    if (!progress) emit({ type: "warning", message: progressWarning(tokens, after, pressure.threshold) });
    return { changed: true, enough: progress, compacted: true, progress, outcome: end.outcome };
  }
}
