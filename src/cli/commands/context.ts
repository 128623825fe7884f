/**
 * `bonsai context FILE [--leaf ID] [--llm]`: what the model would be sent at a leaf. The report
 * is ops/context.ts's; this formats its messages for a terminal.
 */
import { type Command, InvalidArgumentError } from "commander";
import { estimateTokens } from "../../compaction/tokens.js";
import type { AgentMessage, LlmMessage } from "../../format/message-types.js";
import { clip, contentForDisplay, formatToolCall } from "../../messages/preview.js";
import { type ContextReport, sessionContextReport } from "../../ops/context.js";
import { droppedReport } from "../../ops/dropped.js";
import { formatDropped } from "../dropped-format.js";
import { type Colors, colors, formatCount, print, printJson, runAction, warn, SESSION_ARGUMENT_HELP } from "../output.js";

export interface BodyLimits {
  maxLines: number;
  maxChars: number;
}

const FULL: BodyLimits = { maxLines: Number.POSITIVE_INFINITY, maxChars: Number.POSITIVE_INFINITY };
const SHORT: BodyLimits = { maxLines: 12, maxChars: 1200 };

/** Keeps the head of a long text and says how much was left out. */
export function truncateBody(text: string, limits: BodyLimits): string {
  let lines = text.replace(/\s+$/, "").split("\n");
  let cutLines = 0;
  if (lines.length > limits.maxLines) {
    cutLines = lines.length - limits.maxLines;
    lines = lines.slice(0, limits.maxLines);
  }
  let body = lines.join("\n");
  let cutChars = 0;
  if (body.length > limits.maxChars) {
    cutChars = body.length - limits.maxChars;
    body = body.slice(0, limits.maxChars);
  }
  if (cutLines > 0) return `${body}\n… (${cutLines} more ${cutLines === 1 ? "line" : "lines"})`;
  if (cutChars > 0) return `${body}… (${formatCount(cutChars)} more chars)`;
  return body;
}

function messageBody(message: AgentMessage | LlmMessage, c: Colors, limits: BodyLimits): string {
  switch (message.role) {
    case "assistant": {
      const parts: string[] = [];
      for (const block of message.content) {
        if (block.type === "thinking") parts.push(c.dim(`(thinking) ${clip(block.thinking, 160)}`));
        else if (block.type === "text") parts.push(truncateBody(block.text, limits));
        else if (block.type === "toolCall") parts.push(c.cyan(`→ ${formatToolCall(block.name, block.arguments, limits === FULL ? 100_000 : 80)}`));
      }
      if (message.errorMessage) parts.push(c.red(`(${message.stopReason}) ${message.errorMessage}`));
      return parts.join("\n");
    }
    case "user":
    case "custom":
    case "hookMessage":
    case "toolResult":
      return truncateBody(contentForDisplay(message.content), limits);
    case "bashExecution":
      return truncateBody(`$ ${message.command}\n${message.output}`, limits);
    case "pythonExecution":
      return truncateBody(`${message.code}\n---\n${message.output}`, limits);
    case "branchSummary":
    case "compactionSummary":
      return truncateBody(message.summary, limits);
    case "fileMention":
      return message.files.map((f) => `@${f.path}`).join("\n");
    default:
      return "";
  }
}

function messageHeader(message: AgentMessage | LlmMessage, index: number, c: Colors): string {
  const details: string[] = [];
  if (message.role === "toolResult") details.push(message.toolName + (message.isError ? " (error)" : ""));
  if (message.role === "assistant") details.push(`${message.provider}/${message.model}`);
  if (message.role === "custom") details.push(message.customType);
  if (message.role === "compactionSummary") details.push(`of ${formatCount(message.tokensBefore)} tokens`);
  if (message.role === "branchSummary") details.push(`from ${message.fromId}`);
  details.push(`~${formatCount(estimateTokens(message as AgentMessage))} tok`);
  const title = `#${index + 1} ${message.role}`;
  return `${c.dim("──")} ${c.bold(title)} ${c.dim(`${details.join(" · ")} ──`)}`;
}

export function formatContext(context: ContextReport, c: Colors, limits: BodyLimits = SHORT): string {
  const model = context.model ? `${context.model.provider}/${context.model.modelId}` : "none";
  const out = [
    c.bold(
      `context at leaf ${context.leafId ?? "(none)"}: ${formatCount(context.messageCount)} ${context.llm ? "LLM " : ""}messages, ` +
        `~${formatCount(context.estimatedTokens)} tokens (estimated), thinking ${context.thinkingLevel}, model ${model}`,
    ),
  ];
  const skipped = context.messageCount - context.messages.length;
  if (skipped > 0) out.push(c.dim(`… ${formatCount(skipped)} earlier ${skipped === 1 ? "message" : "messages"} not shown`));
  context.messages.forEach((message, i) => {
    out.push("", messageHeader(message, skipped + i, c), messageBody(message, c, limits));
  });
  return out.join("\n");
}

function parseCount(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("expected a whole number, 0 or more");
  return n;
}

export function register(program: Command): void {
  program
    .command("context")
    .description("what the model would be sent at the current leaf (or --leaf ID)")
    .argument("<file>", SESSION_ARGUMENT_HELP)
    .option("--leaf <id>", "build the context at this entry instead of the current leaf (unique id prefix accepted)")
    .option("--llm", "show messages after convertToLlm (what the provider receives)")
    .option("--last <n>", "show only the newest N messages (counts and tokens still cover all)", parseCount)
    .option("--full", "do not truncate long messages")
    .option("--dropped", "instead: for each compaction on the branch, what its summarized span held that the summary does not mention")
    .option("--json", "print stable JSON: {leafId, thinkingLevel, model, llm, messageCount, estimatedTokens, messages}")
    .action(
      runAction(async (path: string, options: { leaf?: string; llm?: boolean; last?: number; full?: boolean; dropped?: boolean; json?: boolean }) => {
        if (options.dropped) {
          const report = await droppedReport(path, { onWarning: warn });
          if (options.json) printJson(report);
          else print(formatDropped(report, colors()));
          return;
        }
        const result = await sessionContextReport(path, { leaf: options.leaf, llm: options.llm, last: options.last, onWarning: warn });
        if (options.json) printJson(result);
        else print(formatContext(result, colors(), options.full ? FULL : SHORT));
      }),
    );
}
