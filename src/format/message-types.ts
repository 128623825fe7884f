/**
 * Message model: the LLM roles (user, assistant, toolResult) plus the agent-level roles that
 * sessions store (bash runs, custom messages, summaries, file mentions). Plain data, shaped like
 * pi-ai's types so messages pass between bonsai, pi-ai and pi-agent-core without conversion.
 */

export interface TextContent {
  type: "text";
  text: string;
  textSignature?: string;
}

export interface ThinkingContent {
  type: "thinking";
  thinking: string;
  thinkingSignature?: string;
}

export interface ImageContent {
  type: "image";
  /** base64 data */
  data: string;
  mimeType: string;
}

export interface ToolCall {
  type: "toolCall";
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  thoughtSignature?: string;
}

export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  cost?: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
}

export type StopReason = "stop" | "length" | "toolUse" | "error" | "aborted";

export interface UserMessage {
  role: "user";
  content: string | (TextContent | ImageContent)[];
  /** true for prompts the agent injected itself (auto-continue) */
  synthetic?: boolean;
  timestamp: number;
}

export interface AssistantMessage {
  role: "assistant";
  content: (TextContent | ThinkingContent | ToolCall)[];
  api?: string;
  provider: string;
  model: string;
  usage?: Usage;
  stopReason: StopReason;
  errorMessage?: string;
  timestamp: number;
  duration?: number;
  ttft?: number;
}

export interface ToolResultMessage {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: (TextContent | ImageContent)[];
  details?: unknown;
  isError: boolean;
  /** ms epoch; set when pruning replaced the content by a notice */
  prunedAt?: number;
  timestamp: number;
}

export interface BashExecutionMessage {
  role: "bashExecution";
  command: string;
  output: string;
  exitCode?: number | null;
  cancelled: boolean;
  truncated: boolean;
  fullOutputPath?: string;
  meta?: unknown;
  timestamp: number;
  /** the `!!` prefix: recorded, never sent to the model */
  excludeFromContext?: boolean;
}

export interface PythonExecutionMessage {
  role: "pythonExecution";
  code: string;
  output: string;
  exitCode?: number | null;
  cancelled: boolean;
  truncated: boolean;
  meta?: unknown;
  timestamp: number;
  excludeFromContext?: boolean;
}

export interface CustomMessage {
  role: "custom";
  customType: string;
  content: string | (TextContent | ImageContent)[];
  display: boolean;
  details?: unknown;
  timestamp: number;
}

/** Legacy (v2) name of `custom`; migration renames it, but messages built in memory may still use it. */
export interface HookMessage extends Omit<CustomMessage, "role"> {
  role: "hookMessage";
}

export interface BranchSummaryMessage {
  role: "branchSummary";
  summary: string;
  fromId: string;
  timestamp: number;
}

export interface CompactionSummaryMessage {
  role: "compactionSummary";
  summary: string;
  shortSummary?: string;
  tokensBefore: number;
  timestamp: number;
}

/**
 * pi ≥ 0.87's system message: the prompt and the tool loadout as a message of the session
 * (pi-ai's transcript types). Later ones patch earlier ones: content appended, `sections` replaced
 * by name (null deletes), tools removed then added. A compaction keeps the state at its time as
 * its `systemMessage`.
 */
export interface SystemMessage {
  role: "system";
  content: string | TextContent[] | null;
  sections?: Record<string, string | null>;
  toolsAdded?: unknown[];
  toolsRemoved?: { name: string }[];
  timestamp: number;
}

export interface MentionedFile {
  path: string;
  content: string;
  lineCount?: number;
  byteSize?: number;
  skippedReason?: "tooLarge";
  image?: ImageContent;
}

export interface FileMentionMessage {
  role: "fileMention";
  files: MentionedFile[];
  timestamp: number;
}

/** What the model can be sent. */
export type LlmMessage = UserMessage | AssistantMessage | ToolResultMessage;

/** Everything a session's context can hold. */
export type AgentMessage =
  | LlmMessage
  | BashExecutionMessage
  | PythonExecutionMessage
  | CustomMessage
  | HookMessage
  | BranchSummaryMessage
  | CompactionSummaryMessage
  | FileMentionMessage
  | SystemMessage;

export type MessageRole = AgentMessage["role"];
