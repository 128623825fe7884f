/**
 * bonsai's public contract (the package root). Names and shapes follow the reference
 * implementation, so code written against it, and the conformance corpus, work unchanged.
 * More, for programs that need it, behind subpaths: `bonsai-sessions/stores` (locations, listing,
 * exact copies), `bonsai-sessions/ops` (the CLI's operations as functions), `/prompts` (the
 * summarizer texts) and `/server` (the summarization endpoint). test/public-api.test.ts pins
 * the exact list of names here.
 */

// The session format: entries, messages, versions
export type * from "./format/message-types.js";
export type * from "./format/entry-types.js";
export { CURRENT_SESSION_VERSION } from "./format/entry-types.js";
export { migrateSessionEntries } from "./format/migrate.js";
export { parseSessionEntries, loadSessionFile, SessionFileError, type LoadIssue, type LoadedSession } from "./storage/load.js";

// Sessions: the tree of entries over a store, and what the model is sent
export { SessionManager, type OpenOptions } from "./session/manager.js";
export { SessionLockedError } from "./storage/lock.js";
export { buildSessionContext } from "./format/context.js";
export { convertToLlm } from "./messages/convert.js";
export { withoutStrayToolResults } from "./messages/tool-pairing.js";
export { serializeConversation } from "./messages/serialize.js";

// Token accounting
export {
  estimateTokens,
  estimateContextTokens,
  calculateContextTokens,
  getLastAssistantUsage,
  shouldCompact,
  type ContextTokenEstimate,
} from "./compaction/tokens.js";

// Compaction: cut points, preparation, summaries, tool-output pruning
export { DEFAULT_COMPACTION_SETTINGS, type CompactionSettings } from "./compaction/settings.js";
export { findCutPoint, findValidCutPoints, findTurnStartIndex, type CutPoint } from "./compaction/cut-point.js";
export { prepareCompaction, type CompactionPreparation } from "./compaction/prepare.js";
export { compact, type CompactOptions, type CompactionResult, type CompactionDetails } from "./compaction/compact.js";
export { pruneToolOutputs, DEFAULT_PRUNE_CONFIG, type PruneConfig, type PruneResult } from "./compaction/prune.js";

// Branch summaries
export {
  collectEntriesForBranchSummary,
  prepareBranchEntries,
  generateBranchSummary,
  type CollectedBranchEntries,
  type PreparedBranchEntries,
  type GenerateBranchSummaryOptions,
  type BranchSummaryResult,
} from "./compaction/branch-summary.js";

// AgentSession: the agent loop with hooks, events, overflow recovery, retries, abort
export { AgentSession, AUTO_CONTINUE_PROMPT, type AgentSessionOptions } from "./agent/agent-session.js";
export { CompactionError, type CompactionErrorCode } from "./agent/compaction-run.js";
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
export type { HookError, HookHandler } from "./agent/hooks.js";

// Settings
export {
  DEFAULT_SETTINGS,
  loadSettings,
  resolveSettings,
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
  openAiCompatibleModel,
  ModelCallError,
  type PiAiSummarizerOptions,
  type OpenAiCompatibleOptions,
} from "./summarizer/pi-ai.js";
export { remoteSummarizer, type RemoteSummarizerOptions } from "./summarizer/remote.js";
export { extractiveSummarizer } from "./summarizer/extractive.js";
export { redactSecrets, withRedaction, type SecretKind, type RedactionResult } from "./summarizer/redact.js";

// Stores: errors (the store functions are in bonsai-sessions/stores)
export { LocationError, type StoreLocation } from "./storage/location.js";
export { StoreVersionError, type StoreKind } from "./storage/types.js";
