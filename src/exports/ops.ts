/**
 * `bonsai-sessions/ops`: what the `bonsai` commands do, as functions. Each takes a location (opened
 * and closed by the call) or an open SessionManager (left open), and returns the report that
 * `bonsai … --json` prints.
 */
export type { SessionTarget, WarningListener } from "../ops/open-session.js";
export { compactSession, CompactionCancelledError, type CompactSessionOptions, type CompactReport } from "../ops/compact.js";
export type { CompactPlanReport } from "../ops/compaction-plan.js";
export { uncompactSession, type UncompactOptions, type UncompactResult } from "../ops/uncompact.js";
export { droppedReport, type CompactionDrops, type DroppedFact, type DroppedReport } from "../ops/dropped.js";
export { checkoutSession, CheckoutCancelledError, type CheckoutOptions, type CheckoutPreview, type CheckoutResult } from "../ops/checkout.js";
export { navigateTree, type NavigateTreeOptions, type NavigateTreeResult, type NavigateTreeHooks } from "../ops/navigate.js";
export { pruneToolOutput, restoreToolOutput, type PruneReport, type RestoreReport, type PruneToolOutputOptions } from "../ops/prune-report.js";
export { pruneSession, restorePrunedOutputs, type PruneSessionOptions, type PruneSessionResult, type RestoreResult } from "../ops/prune.js";
export { migrateSession, type MigrateResult } from "../ops/migrate.js";
export { setLabel, type LabelResult } from "../ops/label.js";
export { pinEntry, type PinResult } from "../ops/pin.js";
export { sessionInfo, type SessionInfo } from "../ops/info.js";
export { sessionContextReport, type ContextReport, type ContextReportOptions } from "../ops/context.js";
export {
  evaluateSummaries,
  type EvalReport,
  type EvalSession,
  type EvalSummarizer,
  type EvaluateOptions,
  type KnownFact,
  type RoundScore,
  type SessionEval,
  type SummarizerEval,
} from "../ops/eval.js";
export { type FactsFile, type NegativeFact, parseFactsFile } from "../ops/eval-truth.js";
