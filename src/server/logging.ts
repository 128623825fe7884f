/**
 * Structured logs: one JSON line per request with what an operator needs (status, timing,
 * sizes, model, usage) and nothing from the conversation itself: no prompt, no summary text.
 */

export type LogSink = (line: string) => void;

export interface RequestLog {
  reqId: string;
  method: string;
  path: string;
  status: number;
  ms: number;
  promptChars?: number;
  maxTokens?: number;
  purpose?: string;
  summaryChars?: number;
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
  /** one-line reason of a failure */
  error?: string;
  /** the client went away before the answer */
  clientClosed?: boolean;
}

export function logLine(level: "info" | "warn" | "error", event: string, fields: object, now = new Date()): string {
  return JSON.stringify({ time: now.toISOString(), level, event, ...fields });
}

export function levelFor(status: number): "info" | "warn" | "error" {
  return status >= 500 ? "error" : status >= 400 ? "warn" : "info";
}

export const stdoutSink: LogSink = (line) => {
  process.stdout.write(`${line}\n`);
};

/** Error text as one bounded line, fit for a JSON error body or a log field. */
export function oneLineReason(text: string, max = 500): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
