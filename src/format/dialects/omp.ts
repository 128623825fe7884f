/**
 * oh-my-pi 18 (`@oh-my-pi/pi-coding-agent`; read from 18.2.3's `buildSessionContext` in
 * src/session/session-context.ts, checked against omp itself by the oracle suite):
 * - `/clear` writes a `reset_boundary`: when the latest one comes after the latest compaction
 *   (or there is none), the context is only what follows it; a later compaction supersedes it.
 * - assistant turns that failed (`stopReason` error or aborted) are dropped with the tool results
 *   of their calls, unless an `interrupted-thinking` custom message follows; so are turns marked
 *   `retryRecovery`, and planning notes (`prewalk-plan`, `vibe-mode-context` custom messages).
 * - a tool call with no result in the context is stripped from its assistant turn (a turn left
 *   empty goes), and a turn so rewritten loses its signed and redacted reasoning.
 * - the model is the latest `model_change` (`model: "provider/id"`, default role) once there is
 *   one, before that the latest assistant's; pi's `{provider, modelId}` spelling is not read.
 */
import type { AgentMessage, AssistantMessage } from "../message-types.js";
import type { SessionEntry } from "../entry-types.js";
import { messageFromEntry, modelFromSlashed } from "../entry-messages.js";
import { compactionSegments, plainProjection } from "./pi.js";
import type { ContextSegments, ContextSettings, Dialect, ProjectedMessage } from "./types.js";

const DROPPED_CUSTOM_TYPES = new Set(["prewalk-plan", "vibe-mode-context"]);
const INTERRUPTED_THINKING = "interrupted-thinking";

function segments(path: readonly SessionEntry[]): ContextSegments {
  const compacted = compactionSegments(path);
  let reset = path.length - 1;
  while (reset >= 0 && path[reset].type !== "reset_boundary") reset--;
  if (reset > compacted.compaction) return { compaction: -1, kept: -1, start: reset + 1 };
  return compacted;
}

/** An assistant turn the provider refused before any output: nothing but the error. */
function isEmptyErrorTurn(message: AssistantMessage): boolean {
  if (message.stopReason !== "error") return false;
  return !message.content.some((block) => {
    const b = block as { type: string; text?: string; thinking?: string; thinkingSignature?: string; data?: string };
    if (b.type === "text") return (b.text ?? "").trim() !== "";
    if (b.type === "thinking") return (b.thinking ?? "").trim() !== "" || (b.thinkingSignature ?? "").trim() !== "";
    if (b.type === "redactedThinking") return (b.data ?? "").trim() !== "";
    return b.type !== "fallback"; // a tool call, or a block kind omp does not know, is content
  });
}

/** The message an entry gives in omp's context, if any. */
function ompMessage(entry: SessionEntry): AgentMessage | undefined {
  if (entry.type === "message" && entry.message.role === "assistant") {
    const m = entry.message as AssistantMessage & { retryRecovery?: unknown };
    if (m.retryRecovery || isEmptyErrorTurn(m)) return undefined;
  }
  if (entry.type === "custom_message" && DROPPED_CUSTOM_TYPES.has(entry.customType)) return undefined;
  return messageFromEntry(entry);
}

/** Tool calls with no result in the context stripped from every assistant turn (a turn left empty goes). */
function stripDanglingToolCalls(out: ProjectedMessage[]): void {
  const answered = new Set<string>();
  for (const { message: m } of out) if (m.role === "toolResult") answered.add(m.toolCallId);
  for (let i = out.length - 1; i >= 0; i--) {
    const m = out[i].message;
    if (m.role !== "assistant" || !m.content.some((b) => b.type === "toolCall" && !answered.has(b.id))) continue;
    const content = m.content
      .filter((b) => !(b.type === "toolCall" && !answered.has(b.id)) && (b.type as string) !== "redactedThinking")
      .map((b) => (b.type === "thinking" && b.thinkingSignature ? { ...b, thinkingSignature: undefined } : b));
    if (content.length === 0) out.splice(i, 1);
    else out[i] = { index: out[i].index, message: { ...m, content } };
  }
}

/** Failed turns dropped, with the results of their calls. */
function dropFailedTurns(out: ProjectedMessage[]): void {
  for (let i = out.length - 1; i >= 0; i--) {
    const m = out[i].message;
    if (m.role !== "assistant" || (m.stopReason !== "error" && m.stopReason !== "aborted")) continue;
    const next = out[i + 1]?.message;
    if (next?.role === "custom" && next.customType === INTERRUPTED_THINKING) continue;
    const calls = new Set(m.content.flatMap((b) => (b.type === "toolCall" ? [b.id] : [])));
    out.splice(i, 1);
    for (let j = out.length - 1; j >= i; j--) {
      const r = out[j].message;
      if (r.role === "toolResult" && calls.has(r.toolCallId)) out.splice(j, 1);
    }
  }
}

/** omp's context: pi's compaction rule (from its segments), its own per-entry filter, then the passes over the whole list. */
function project(path: readonly SessionEntry[], segments: ContextSegments): ProjectedMessage[] {
  const out = plainProjection(path, segments, ompMessage);
  stripDanglingToolCalls(out);
  dropFailedTurns(out);
  return out;
}

function settings(path: readonly SessionEntry[]): ContextSettings {
  let thinkingLevel = "off";
  let chosen: string | undefined;
  let inferred: string | undefined;
  for (const entry of path) {
    if (entry.type === "thinking_level_change") thinkingLevel = entry.thinkingLevel ?? "off";
    else if (entry.type === "model_change" && typeof entry.model === "string" && (entry.role ?? "default") === "default") chosen = entry.model;
    else if (entry.type === "message" && entry.message.role === "assistant" && chosen === undefined) {
      inferred = `${entry.message.provider}/${entry.message.model}`;
    }
  }
  const model = chosen ?? inferred;
  return { thinkingLevel, model: (model && modelFromSlashed(model)) || null };
}

export const ompDialect: Dialect = {
  name: "omp",
  writtenBy: "oh-my-pi 18",
  ruleSource: "oh-my-pi 18.2.3, buildSessionContext in src/session/session-context.ts",
  contextEdits: false,
  segments,
  project,
  settings,
  settingsFromLatest: false,
  // omp: the destination, which is also the summary's parent
  branchSummaryFromId: (destination) => destination ?? "root",
  compactionFields: () => ({}),
  // a tool call is stripped until its result comes, and a failed turn takes earlier results with it
  appendsOnly: () => false,
};
