/**
 * Small builders for messages and entries, shared by the session tests. Timestamps are fixed so
 * expected contexts can be written out in full.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type {
  AssistantMessage,
  ImageContent,
  ToolResultMessage,
  Usage,
  UserMessage,
} from "../../src/format/message-types.js";
import type { SessionEntry } from "../../src/format/entry-types.js";

export const T0 = Date.parse("2026-01-01T00:00:00.000Z");

/** ISO time `seconds` after T0. */
export const iso = (seconds: number): string => new Date(T0 + seconds * 1000).toISOString();

export function usage(input: number, output: number, cacheRead = 0, cacheWrite = 0, totalTokens = 0): Usage {
  return {
    input,
    output,
    cacheRead,
    cacheWrite,
    totalTokens,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
}

export function userMsg(text: string, timestamp = T0): UserMessage {
  return { role: "user", content: text, timestamp };
}

export function assistantMsg(
  text: string,
  options: Partial<Pick<AssistantMessage, "provider" | "model" | "usage" | "stopReason" | "timestamp">> = {},
): AssistantMessage {
  return {
    role: "assistant",
    content: [{ type: "text", text }],
    api: "anthropic-messages",
    provider: options.provider ?? "anthropic",
    model: options.model ?? "claude-sonnet-4-5",
    usage: options.usage ?? usage(100, 50),
    stopReason: options.stopReason ?? "stop",
    timestamp: options.timestamp ?? T0,
  };
}

export function toolResultMsg(text: string, images: ImageContent[] = [], timestamp = T0): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId: "call_1",
    toolName: "read",
    content: [{ type: "text", text }, ...images],
    isError: false,
    timestamp,
  };
}

export const image = (data = "aGVsbG8=", mimeType = "image/png"): ImageContent => ({ type: "image", data, mimeType });

type Fields = Record<string, unknown>;

/** Any entry, with the base fields filled in; `at` is seconds after T0. */
export function entry(type: string, id: string, parentId: string | null, fields: Fields = {}, at = 0): SessionEntry {
  return { type, id, parentId, timestamp: iso(at), ...fields } as unknown as SessionEntry;
}

export const msg = (id: string, parentId: string | null, message: unknown, at = 0): SessionEntry =>
  entry("message", id, parentId, { message }, at);

export const userEntry = (id: string, parentId: string | null, text: string, at = 0) =>
  msg(id, parentId, userMsg(text), at);

export const assistantEntry = (id: string, parentId: string | null, text: string, at = 0, model?: string) =>
  msg(id, parentId, assistantMsg(text, model ? { model } : {}), at);

/** A fresh temp dir, removed by the returned cleanup. */
export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "bonsai-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
