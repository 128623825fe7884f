/**
 * convertToLlm: agent-level messages to what a provider accepts (user, assistant, toolResult).
 * Summaries are wrapped in short context templates by plain concatenation: the summary text is
 * inserted exactly as stored, never re-indented or re-flowed.
 */
import type {
  AgentMessage,
  BashExecutionMessage,
  FileMentionMessage,
  ImageContent,
  LlmMessage,
  PythonExecutionMessage,
  TextContent,
  ToolResultMessage,
  UserMessage,
} from "../format/message-types.js";
import { joinTextBlocks } from "./text-blocks.js";

export const COMPACTION_SUMMARY_INTRO =
  "Earlier parts of this conversation were condensed to stay within the context window. " +
  "The summary below records what happened so far; continue the work from it without redoing what it marks as done.";

export const BRANCH_SUMMARY_INTRO =
  "Before returning to this point, the conversation explored another branch. This summarizes what was learned there:";

export function compactionSummaryText(summary: string): string {
  return `${COMPACTION_SUMMARY_INTRO}\n\n<summary>\n${summary}\n</summary>`;
}

export function branchSummaryText(summary: string): string {
  return `${BRANCH_SUMMARY_INTRO}\n\n<summary>\n${summary}\n</summary>`;
}

export const PRUNED_PLACEHOLDER = "[Output removed to save context]";

export function bashExecutionText(m: BashExecutionMessage): string {
  let text = `Ran \`${m.command}\`\n`;
  text += m.output ? `\`\`\`\n${m.output}\n\`\`\`` : "(no output)";
  if (m.cancelled) text += "\n\n(command cancelled)";
  else if (m.exitCode !== null && m.exitCode !== undefined && m.exitCode !== 0) {
    text += `\n\nCommand exited with code ${m.exitCode}`;
  }
  if (m.truncated) {
    text += m.fullOutputPath
      ? `\n\n[Output truncated. Full output: ${m.fullOutputPath}]`
      : "\n\n[Output truncated]";
  }
  return text;
}

export function pythonExecutionText(m: PythonExecutionMessage): string {
  let text = `Ran Python:\n\`\`\`python\n${m.code}\n\`\`\`\n`;
  text += m.output ? `Output:\n\`\`\`\n${m.output}\n\`\`\`` : "(no output)";
  if (m.cancelled) text += "\n\n(execution cancelled)";
  else if (m.exitCode !== null && m.exitCode !== undefined && m.exitCode !== 0) {
    text += `\n\nExited with code ${m.exitCode}`;
  }
  if (m.truncated) text += "\n\n[Output truncated]";
  return text;
}

function fileMentionMessage(m: FileMentionMessage): UserMessage {
  const files = m.files.map((f) =>
    f.skippedReason === "tooLarge"
      ? `<file path="${f.path}">(skipped: file too large${f.byteSize ? `, ${f.byteSize} bytes` : ""})</file>`
      : `<file path="${f.path}">\n${f.content}\n</file>`,
  );
  const content: (TextContent | ImageContent)[] = [
    { type: "text", text: `<system-reminder>\n${files.join("\n")}\n</system-reminder>` },
  ];
  for (const f of m.files) if (f.image) content.push(f.image);
  return { role: "user", content, timestamp: m.timestamp };
}

const userText = (text: string, timestamp: number): UserMessage => ({
  role: "user",
  content: [{ type: "text", text }],
  timestamp,
});

/** A pruned tool result keeps only its text (the notice), never its images. */
function prunedToolResult(m: ToolResultMessage): ToolResultMessage {
  const text = joinTextBlocks(m.content, "");
  return { ...m, content: [{ type: "text", text: text || PRUNED_PLACEHOLDER }] };
}

export function convertMessageToLlm(m: AgentMessage): LlmMessage | undefined {
  switch (m.role) {
    case "user":
    case "assistant":
      return m;
    case "toolResult":
      return m.prunedAt !== undefined ? prunedToolResult(m) : m;
    case "bashExecution":
      return m.excludeFromContext ? undefined : userText(bashExecutionText(m), m.timestamp);
    case "pythonExecution":
      return m.excludeFromContext ? undefined : userText(pythonExecutionText(m), m.timestamp);
    case "custom":
    case "hookMessage":
      return {
        role: "user",
        content: typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content,
        timestamp: m.timestamp,
      };
    case "branchSummary":
      return userText(branchSummaryText(m.summary), m.timestamp);
    case "compactionSummary":
      return userText(compactionSummaryText(m.summary), m.timestamp);
    case "fileMention":
      return fileMentionMessage(m);
    default:
      return undefined;
  }
}

export function convertToLlm(messages: readonly AgentMessage[]): LlmMessage[] {
  const out: LlmMessage[] = [];
  for (const m of messages) {
    const converted = convertMessageToLlm(m);
    if (converted) out.push(converted);
  }
  return out;
}
