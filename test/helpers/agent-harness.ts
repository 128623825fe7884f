/**
 * A real AgentSession over pi-ai's faux provider, for the AgentSession tests: scripted model
 * answers (fresh timestamps, usage computed by the provider from the prompt it was sent), a
 * scripted summarizer that records its requests, and an event log.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type AssistantMessage as PiAssistantMessage,
  type FauxProviderRegistration,
  type FauxResponseStep,
  fauxAssistantMessage,
  registerFauxProvider,
} from "@mariozechner/pi-ai";
import { AgentSession, type AgentSessionOptions } from "../../src/agent/agent-session.js";
import type { AgentSessionEvent } from "../../src/agent/events.js";
import type { SettingsInput } from "../../src/config/settings.js";
import { SessionManager } from "../../src/session/manager.js";
import { SummarizationAbortedError, type SummarizeRequest, type Summarizer } from "../../src/summarizer/types.js";

/** A model answer built when it is requested (so its timestamp is current). */
export function reply(
  text: string,
  options: { stopReason?: PiAssistantMessage["stopReason"]; errorMessage?: string } = {},
): FauxResponseStep {
  return () => fauxAssistantMessage(text, options);
}

export function replies(count: number, text: (i: number) => string = (i) => `answer ${i}`): FauxResponseStep[] {
  return Array.from({ length: count }, (_, i) => reply(text(i)));
}

export interface ScriptedSummarizer extends Summarizer {
  requests: SummarizeRequest[];
  /** history summaries produced so far */
  count: number;
}

/**
 * Summaries "Summary N of <chars> chars". `gate` (when set) is awaited before answering, so a
 * test can hold a compaction open; an abort of the request's signal rejects at once.
 */
export function scriptedSummarizer(
  options: { gate?: () => Promise<void>; fail?: (request: SummarizeRequest) => Error | undefined } = {},
): ScriptedSummarizer {
  const summarizer: ScriptedSummarizer = {
    name: "scripted",
    contextWindow: 0,
    reasoning: false,
    requests: [],
    count: 0,
    async summarize(request) {
      summarizer.requests.push(request);
      if (options.gate) {
        await Promise.race([
          options.gate(),
          new Promise((_, reject) => {
            if (request.signal?.aborted) reject(new SummarizationAbortedError());
            request.signal?.addEventListener("abort", () => reject(new SummarizationAbortedError()), { once: true });
          }),
        ]);
      }
      if (request.signal?.aborted) throw new SummarizationAbortedError();
      const failure = options.fail?.(request);
      if (failure) throw failure;
      if (request.purpose === "history") summarizer.count++;
      const label = request.purpose === "short" ? "Short summary" : `Summary ${summarizer.count}`;
      return { text: `${label} of ${request.prompt.length} chars` };
    },
  };
  return summarizer;
}

export interface Harness {
  faux: FauxProviderRegistration;
  session: AgentSession;
  manager: SessionManager;
  events: AgentSessionEvent[];
  summarizer: ScriptedSummarizer;
  dir: string | undefined;
  /** event types, without the chatty streaming ones */
  types(): string[];
  autoEvents(): AgentSessionEvent[];
  cleanup(): void;
}

const CHATTY = new Set(["message_update", "message_start", "turn_start", "turn_end", "agent_start", "tool_execution_update"]);

export async function createHarness(
  options: {
    contextWindow?: number;
    maxTokens?: number;
    settings?: SettingsInput;
    responses?: FauxResponseStep[];
    persisted?: boolean;
    tokensPerSecond?: number;
    summarizer?: ScriptedSummarizer;
    session?: Partial<AgentSessionOptions>;
    models?: { id: string; contextWindow: number }[];
  } = {},
): Promise<Harness> {
  const faux = registerFauxProvider({
    models: options.models ?? [{ id: "faux-small", contextWindow: options.contextWindow ?? 2000, maxTokens: options.maxTokens ?? 500 }],
    tokensPerSecond: options.tokensPerSecond,
  });
  faux.setResponses(options.responses ?? []);
  const dir = options.persisted ? mkdtempSync(join(tmpdir(), "bonsai-")) : undefined;
  const manager = dir ? SessionManager.create("/project", dir) : SessionManager.inMemory("/project");
  const summarizer = options.summarizer ?? scriptedSummarizer();
  const session = await AgentSession.create({
    sessionManager: manager,
    model: faux.getModel() as never,
    systemPrompt: "You are terse.",
    getApiKey: () => "test-key",
    summarizer,
    settings: {
      ...options.settings,
      compaction: { reserveTokens: 500, keepRecentTokens: 300, ...options.settings?.compaction },
      retry: { baseDelayMs: 1, ...options.settings?.retry },
    },
    prune: false,
    // faux models are not in pi-ai's registry
    resolveModel: (provider, id) => (provider === faux.models[0].provider ? (faux.getModel(id) as never) : undefined),
    ...options.session,
  });
  const events: AgentSessionEvent[] = [];
  session.subscribe((event) => events.push(event));
  return {
    faux,
    session,
    manager,
    events,
    summarizer,
    dir,
    types: () => events.map((e) => e.type).filter((t) => !CHATTY.has(t)),
    autoEvents: () => events.filter((e) => e.type.startsWith("auto_")),
    cleanup() {
      faux.unregister();
      manager.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** "role" per message entry, other entry types by their type: a compact picture of a file. */
export function entryShape(manager: SessionManager): string[] {
  return manager.getEntries().map((e) => {
    if (e.type === "message") return e.message.role;
    if (e.type === "custom") return `custom:${e.customType}`;
    return e.type;
  });
}

/** A user prompt of about `tokens` estimated tokens. */
export function bigText(label: string, tokens: number): string {
  return `${label} ${"x".repeat(Math.max(0, tokens * 4 - label.length - 1))}`;
}
