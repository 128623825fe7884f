/**
 * Scripted tools and model steps for the AgentSession compaction tests: a lookup tool whose
 * results have a chosen size, in-memory read/write tools over a map of files, and a model that
 * calls a tool a number of times before it answers.
 */
import { type FauxResponseStep, fauxAssistantMessage, fauxToolCall, Type } from "@mariozechner/pi-ai";
import type { AgentSessionEvent } from "../../src/agent/events.js";

export function lookupTool(tokens: number, options: { delayMs?: number } = {}) {
  return {
    name: "lookup",
    label: "Lookup",
    description: "looks something up",
    parameters: Type.Object({ key: Type.String() }),
    execute: async (_id: string, params: { key: string }) => {
      if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
      return { content: [{ type: "text" as const, text: `value of ${params.key}: ${"data ".repeat(Math.max(0, tokens * 4 - 20) / 5)}` }], details: {} };
    },
  };
}

/** read and write over `files`; a read returns the file's current content. */
export function fileTools(files: Map<string, string>) {
  const read = {
    name: "read",
    label: "read",
    description: "reads a file",
    parameters: Type.Object({ path: Type.String() }),
    execute: async (_id: string, params: { path: string }) => ({
      content: [{ type: "text" as const, text: files.get(params.path) ?? "no such file" }],
      details: {},
    }),
  };
  const write = {
    name: "write",
    label: "write",
    description: "writes a file",
    parameters: Type.Object({ path: Type.String(), content: Type.String() }),
    execute: async (_id: string, params: { path: string; content: string }) => {
      files.set(params.path, params.content);
      return { content: [{ type: "text" as const, text: `wrote ${params.path}` }], details: {} };
    },
  };
  return [read, write];
}

/**
 * A model that answers each user prompt with `calls` lookups, one per answer, then `finalText`.
 * It counts in a closure, so a compaction of the context in between does not change its script.
 */
export function toolCallingModel(calls: number, finalText = "done"): FauxResponseStep {
  let issued = 0;
  return (context) => {
    const last = context.messages.at(-1);
    if (last?.role === "user" && !JSON.stringify(last.content).includes("Continue")) issued = 0;
    if (issued < calls) {
      const key = `k${issued++}`;
      return fauxAssistantMessage(fauxToolCall("lookup", { key }), { stopReason: "toolUse" });
    }
    return fauxAssistantMessage(finalText);
  };
}

export const autoEnds = (events: AgentSessionEvent[]) =>
  events.filter((e): e is Extract<AgentSessionEvent, { type: "auto_compaction_end" }> => e.type === "auto_compaction_end");

export const autoStarts = (events: AgentSessionEvent[]) =>
  events.filter((e): e is Extract<AgentSessionEvent, { type: "auto_compaction_start" }> => e.type === "auto_compaction_start");
