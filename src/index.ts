/**
 * bonsai's public API. Names follow the reference implementation so code written against it
 * (and the conformance corpus) works unchanged.
 */

// Message model
export type * from "./format/message-types.js";
export {
  convertToLlm,
  convertMessageToLlm,
  compactionSummaryText,
  branchSummaryText,
  bashExecutionText,
} from "./messages/convert.js";
export { withoutStrayToolResults } from "./messages/tool-pairing.js";

// Session format and store
export type * from "./format/entry-types.js";
export { CURRENT_SESSION_VERSION, CHECKOUT_CUSTOM_TYPE, isFromExtension } from "./format/entry-types.js";
export {
  buildSessionContext,
  contextFromPath,
  messageFromEntry,
  modelFromChange,
} from "./format/context.js";
export { migrateSessionEntries, sessionVersion } from "./format/migrate.js";
export {
  parseSessionEntries,
  loadSessionFile,
  loadSessionText,
  SessionFileError,
  type LoadIssue,
  type LoadedSession,
} from "./storage/load.js";
export { SessionManager, defaultSessionDir, type OpenOptions } from "./session/manager.js";
export { SessionLockedError } from "./storage/lock.js";
export { TreeIndex, flattenTree } from "./session/tree.js";
export { pathToRoot, type PathProblem } from "./format/path.js";
export { writeFileAtomic } from "./storage/file-writer.js";

// Token accounting
export {
  estimateTokens,
  forgetTokenEstimate,
  estimateContextTokens,
  calculateContextTokens,
  calculatePromptTokens,
  getLastAssistantUsage,
  shouldCompact,
} from "./compaction/tokens.js";

// Compaction: cut points, preparation, summaries, tool-output pruning
export { DEFAULT_COMPACTION_SETTINGS, summaryTokenBudgets, type CompactionSettings } from "./compaction/settings.js";
export {
  findCutPoint,
  findValidCutPoints,
  findTurnStartIndex,
  isValidCutPoint,
  isTurnStart,
  type CutPoint,
} from "./compaction/cut-point.js";
export {
  prepareCompaction,
  planCompaction,
  contextTokensOfPath,
  type CompactionPreparation,
  type CompactionPlan,
  type NoCompactionReason,
} from "./compaction/prepare.js";
export {
  compact,
  serializeParts,
  type CompactOptions,
  type CompactionResult,
  type CompactionDetails,
} from "./compaction/compact.js";
export { summarizeConversation, type ConversationSummaryRequest } from "./compaction/chunking.js";
export {
  createFileOps,
  extractFileOpsFromMessage,
  computeFileLists,
  formatFileOperations,
  stripFileOperations,
  type FileOps,
} from "./compaction/file-ops.js";
export { serializeConversation, truncateMiddle } from "./messages/serialize.js";
export {
  pruneToolOutputs,
  planPruning,
  prunedNotice,
  DEFAULT_PRUNE_CONFIG,
  type PruneConfig,
  type PrunePlan,
  type PruneCandidate,
  type PruneResult,
} from "./compaction/prune.js";
export {
  pruneSession,
  restorePrunedOutputs,
  prunedArchivePath,
  readPrunedRecords,
  entriesInContext,
  type PrunedRecord,
  type PruneSessionOptions,
  type PruneSessionResult,
  type RestoreResult,
} from "./ops/prune.js";
export {
  COMPACTION_SYSTEM_PROMPT,
  INITIAL_SUMMARY_PROMPT,
  UPDATE_SUMMARY_PROMPT,
  TURN_PREFIX_PROMPT,
  SHORT_SUMMARY_PROMPT,
  SUMMARY_SECTIONS,
  PROGRESS_SUBSECTIONS,
  TURN_PREFIX_SECTIONS,
} from "./prompts/compaction.js";
export { assembleSummaryPrompt, type SummaryPromptParts } from "./prompts/assemble.js";

// Branch summaries and tree navigation
export {
  collectEntriesForBranchSummary,
  prepareBranchEntries,
  generateBranchSummary,
  branchSummaryBudget,
  formatBranchSummary,
  DEFAULT_BRANCH_SUMMARY_RESERVE_TOKENS,
  type BranchSource,
  type CollectedBranchEntries,
  type PreparedBranchEntries,
  type GenerateBranchSummaryOptions,
  type BranchSummaryResult,
} from "./compaction/branch-summary.js";
export {
  BRANCH_SUMMARY_PROMPT,
  BRANCH_SUMMARY_PREAMBLE,
  BRANCH_SUMMARY_SYSTEM_PROMPT,
} from "./prompts/branch.js";
export {
  navigateTree,
  destinationOf,
  type NavigateTreeOptions,
  type NavigateTreeResult,
  type NavigateTreeHooks,
  type TreePreparation,
  type BeforeTreeResult,
} from "./ops/navigate.js";

// AgentSession: orchestration over pi-agent-core's Agent, hooks, settings, retries
export {
  AgentSession,
  AUTO_CONTINUE_PROMPT,
  type AgentSessionOptions,
} from "./agent/agent-session.js";
export { CompactionError, type CompactionErrorCode, validateHookCompaction } from "./agent/compaction-run.js";
export type {
  AgentSessionEvent,
  AgentSessionListener,
  AutoCompactionReason,
  BeforeCompactResult,
  CompactingResult,
  CompactionReason,
  HookCompaction,
  SessionCompactionResult,
  SessionHookEvents,
  SessionHookName,
} from "./agent/events.js";
export { HookRunner, type HookError, type HookHandler } from "./agent/hooks.js";
export { backoffDelay, isRetryableError, parseRetryAfter, planSummarizerRetry } from "./agent/retry.js";
export { checkCompaction, isOverflow, shouldAutoContinue, type CompactionTrigger } from "./agent/overflow.js";
export { selectCandidates, parseModelRef } from "./agent/candidates.js";
export {
  DEFAULT_SETTINGS,
  loadSettings,
  mergeSettings,
  parseSettings,
  resolveSettings,
  settingsPaths,
  SettingsError,
  type Settings,
  type SettingsInput,
  type BranchSummarySettings,
  type RetrySettings,
  type LoadSettingsOptions,
} from "./config/settings.js";

// Summarizers: pi-ai models, remote endpoints, the offline extractive summarizer, redaction
export type { Summarizer, SummarizeRequest, SummarizeResult } from "./summarizer/types.js";
export { SummarizationAbortedError, SummarizerConfigError } from "./summarizer/types.js";
export {
  piAiSummarizer,
  resolveModelSpec,
  openAiCompatibleModel,
  ModelCallError,
  type PiAiSummarizerOptions,
  type OpenAiCompatibleOptions,
} from "./summarizer/pi-ai.js";
export { remoteSummarizer, type RemoteSummarizerOptions } from "./summarizer/remote.js";
export { extractiveSummarizer, extractiveSummary, EXTRACTIVE_LABEL } from "./summarizer/extractive.js";
export { redactSecrets, withRedaction, type SecretKind, type RedactionResult } from "./summarizer/redact.js";
export { selectSummarizer, type SummarizerChoice } from "./summarizer/select.js";

// Summarization server (bonsai serve). It loads fastify, so it is imported only when started.
export type { ServerOptions, StartOptions, RunningServer } from "./server/app.js";
export async function startSummarizationServer(
  options: import("./server/app.js").StartOptions,
): Promise<import("./server/app.js").RunningServer> {
  return (await import("./server/app.js")).startServer(options);
}

// Chat (bonsai chat): the pure parts of the interactive agent and its tools confined to a
// directory. The terminal app loads pi-tui and is started by the CLI, so it is not exported.
export { CHAT_COMMANDS, parseChatInput, type ChatInput } from "./chat/commands.js";
export { buildTreeView, formatTreeRow, isBookkeeping, type TreeRow, type TreeView } from "./chat/tree-view.js";
export { formatContextUsage, formatFooter, formatTokens } from "./chat/footer.js";
export { createChatTools, resolveInside, ToolInputError, type ChatToolOptions } from "./chat/tools.js";
export { InputQueue, queueNotice } from "./chat/queue.js";

// Stores: sessions in JSONL files, SQLite or PostgreSQL behind one interface; locations as URLs
// (SessionManager.openUrl / createIn take them). pg and better-sqlite3 load on first use.
export {
  parseLocation,
  formatLocation,
  LocationError,
  type StoreLocation,
} from "./storage/location.js";
export { openSessionAt, listSessionsAt, readLinesAt } from "./storage/open.js";
export { copySession, type CopiedArchive, type CopyOptions, type CopyResult } from "./storage/copy.js";
export { archiveLocation, readArchiveAt } from "./storage/archive.js";
export {
  StoreVersionError,
  type SessionBackend,
  type SessionSummary,
  type StoreKind,
  type OpenedSession,
  type OpenSessionOptions,
  type StoredLines,
  type PrunedArchive,
} from "./storage/types.js";
