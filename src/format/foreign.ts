/**
 * Session files of other coding agents, recognized by their first line so that bonsai can say
 * what a file is when it refuses it: Claude Code (lines with `uuid`, `parentUuid` and
 * `sessionId`, a `summary` line with `leafUuid`, a `file-history-snapshot` line, or a
 * `queue-operation`, `custom-title` or `progress` line with a `sessionId`) and Codex (rollout files: `session_meta`,
 * `response_item`, `event_msg` or `turn_context` lines with a `payload`; older ones open with an
 * `{id, timestamp, instructions}` line).
 */

export type ForeignSessionFormat = "Claude Code" | "Codex";

const CODEX_TYPES = new Set(["session_meta", "response_item", "event_msg", "turn_context", "compacted"]);
const CLAUDE_TYPES = new Set(["user", "assistant", "system", "summary"]);
const CLAUDE_SESSION_TYPES = new Set(["queue-operation", "custom-title", "progress"]);

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** Which other agent wrote a line like `value`, or undefined. */
export function foreignSessionFormat(value: unknown): ForeignSessionFormat | undefined {
  if (!isRecord(value)) return undefined;
  const type = value.type;
  // Claude Code opens a file with one when its first act was a file snapshot
  if (type === "file-history-snapshot" && typeof value.messageId === "string" && isRecord(value.snapshot)) return "Claude Code";
  // its bookkeeping lines (the prompt queue, a title the user set) carry the session id
  if (typeof type === "string" && CLAUDE_SESSION_TYPES.has(type) && typeof value.sessionId === "string") return "Claude Code";
  if (typeof type === "string" && CLAUDE_TYPES.has(type)) {
    if (type === "summary" && typeof value.leafUuid === "string") return "Claude Code";
    if (typeof value.uuid === "string" && "parentUuid" in value && typeof value.sessionId === "string") return "Claude Code";
  }
  if (typeof type === "string" && CODEX_TYPES.has(type) && isRecord(value.payload)) return "Codex";
  if (type === undefined && typeof value.id === "string" && typeof value.timestamp === "string" && "instructions" in value) return "Codex";
  return undefined;
}

/** The refusal for a file another agent wrote: what it is, and what bonsai reads instead. */
export function foreignSessionMessage(format: ForeignSessionFormat): string {
  return `this is a ${format} session, not a pi or oh-my-pi session; bonsai reads only the session files of pi and oh-my-pi (and its own)`;
}
