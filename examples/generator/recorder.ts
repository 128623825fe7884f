/**
 * Records a scripted coding session through bonsai's own SessionManager: user prompts, assistant
 * turns with thinking and tool calls, tool results computed on the in-memory Workspace, and
 * provider usage that grows with the context the way a real prompt cache does.
 */
import { estimateTokens } from "../../src/compaction/tokens.js";
import type { AssistantMessage, ToolCall, Usage } from "../../src/format/message-types.js";
import type { SessionManager } from "../../src/session/manager.js";
import type { ToolOutcome, Workspace } from "./workspace.js";

export { seededRandom } from "../../src/util/seeded-random.js";

/** The session's wall clock, advanced by the script (the store stamps entries with Date). */
export class ScriptClock {
  constructor(public now: number) {}
  advance(ms: number): void {
    this.now += Math.round(ms);
  }
}

export type ToolStep = (
  | { name: "read"; path: string; offset?: number; limit?: number }
  | { name: "write"; path: string; content: string }
  | { name: "edit"; path: string; edits: { oldText: string; newText: string }[] }
  | { name: "bash"; command: string; output: string | ((ws: Workspace) => string); exitCode?: number; seconds?: number }
) & {
  /** the script means this call to fail; any other failing read/edit is a bug in the script */
  expectError?: boolean;
};

/** Marks a call that is meant to fail (a missing file, an edit whose old text is not unique). */
export const failing = (step: ToolStep): ToolStep => ({ ...step, expectError: true });

export const read = (path: string, offset?: number, limit?: number): ToolStep => ({ name: "read", path, offset, limit });
export const write = (path: string, content: string): ToolStep => ({ name: "write", path, content });
export const edit = (path: string, ...pairs: [string, string][]): ToolStep => ({
  name: "edit",
  path,
  edits: pairs.map(([oldText, newText]) => ({ oldText, newText })),
});
export const bash = (
  command: string,
  output: string | ((ws: Workspace) => string),
  exitCode = 0,
  seconds = 0.4,
): ToolStep => ({ name: "bash", command, output, exitCode, seconds });

interface ModelInfo {
  api: string;
  provider: string;
  model: string;
  /** $ per million tokens: input, output, cache read, cache write */
  price: [number, number, number, number];
}

export const SONNET: ModelInfo = { api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", price: [3, 15, 0.3, 3.75] };
export const OPUS: ModelInfo = { api: "anthropic-messages", provider: "anthropic", model: "claude-opus-4-1", price: [15, 75, 1.5, 18.75] };

/** System prompt and tool definitions: sent with every request, never stored in the session. */
const SYSTEM_TOKENS = 3_150;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

export class SessionRecorder {
  private model: ModelInfo = SONNET;
  /** prompt tokens the provider had cached after the previous request */
  private cachedPrefix = 0;

  constructor(
    readonly session: SessionManager,
    readonly ws: Workspace,
    readonly clock: ScriptClock,
    private readonly random: () => number,
  ) {}

  private jitter(minMs: number, maxMs: number): void {
    this.clock.advance(minMs + this.random() * (maxMs - minMs));
  }

  private randomString(length: number, alphabet = BASE62): string {
    let out = "";
    for (let i = 0; i < length; i++) out += alphabet[Math.floor(this.random() * alphabet.length)];
    return out;
  }

  useModel(model: ModelInfo): string {
    this.model = model;
    this.cachedPrefix = 0;
    return this.session.appendModelChange(model.provider, model.model);
  }

  thinkingLevel(level: string): string {
    return this.session.appendThinkingLevelChange(level);
  }

  user(text: string): string {
    this.jitter(20_000, 140_000);
    return this.session.appendMessage({ role: "user", content: [{ type: "text", text }], timestamp: this.clock.now });
  }

  /** A command the user ran themselves with `!`; its output joins the context as a user turn. */
  userBash(command: string, output: string, exitCode = 0): string {
    this.jitter(10_000, 60_000);
    return this.session.appendMessage({
      role: "bashExecution",
      command,
      output,
      exitCode,
      cancelled: false,
      truncated: false,
      timestamp: this.clock.now,
    });
  }

  /** One assistant message with tool calls, then one tool result per call. Returns the assistant entry id. */
  act(step: { thinking?: string; text?: string; calls: ToolStep[] }): string {
    const calls: ToolCall[] = step.calls.map((call) => ({
      type: "toolCall",
      id: `toolu_01${this.randomString(22)}`,
      name: call.name,
      arguments: toolArguments(call),
    }));
    const assistantId = this.assistant(step.thinking, step.text, calls, "toolUse");
    step.calls.forEach((call, i) => {
      const outcome = this.run(call);
      if (outcome.isError && call.name !== "bash" && !call.expectError) {
        throw new Error(`example script bug: ${call.name} ${"path" in call ? call.path : ""} failed: ${outcome.text}`);
      }
      if (!outcome.isError && call.expectError) throw new Error(`example script bug: ${call.name} was meant to fail`);
      this.jitter(call.name === "bash" ? ((call.seconds ?? 0.4) * 1000) : 40, call.name === "bash" ? ((call.seconds ?? 0.4) * 1300) : 300);
      this.session.appendMessage({
        role: "toolResult",
        toolCallId: calls[i].id,
        toolName: call.name,
        content: [{ type: "text", text: outcome.text }],
        ...(outcome.details !== undefined ? { details: outcome.details } : {}),
        isError: outcome.isError,
        timestamp: this.clock.now,
      });
    });
    return assistantId;
  }

  /** The assistant's closing answer of a turn. */
  reply(text: string, thinking?: string): string {
    return this.assistant(thinking, text, [], "stop");
  }

  private run(call: ToolStep): ToolOutcome {
    switch (call.name) {
      case "read":
        return this.ws.read(call.path, call.offset, call.limit);
      case "write":
        return this.ws.write(call.path, call.content);
      case "edit":
        return this.ws.edit(call.path, call.edits);
      case "bash": {
        const output = typeof call.output === "function" ? call.output(this.ws) : call.output;
        const exitCode = call.exitCode ?? 0;
        if (exitCode === 0) return { text: output || "(no output)", isError: false };
        return { text: `${output}\n\nCommand exited with code ${exitCode}`, isError: true };
      }
    }
  }

  private assistant(
    thinking: string | undefined,
    text: string | undefined,
    calls: ToolCall[],
    stopReason: "toolUse" | "stop",
  ): string {
    const content: AssistantMessage["content"] = [];
    if (thinking) content.push({ type: "thinking", thinking, thinkingSignature: this.randomString(96) });
    if (text) content.push({ type: "text", text });
    content.push(...calls);
    const started = this.clock.now;
    const message: AssistantMessage = {
      role: "assistant",
      content,
      api: this.model.api,
      provider: this.model.provider,
      model: this.model.model,
      usage: this.usageFor(content),
      stopReason,
      timestamp: started,
    };
    // generation time grows with what was written
    this.jitter(1_500 + estimateTokens(message) * 12, 3_000 + estimateTokens(message) * 25);
    return this.session.appendMessage(message);
  }

  /**
   * What the provider would report: the prompt is the system prompt plus the current context;
   * whatever the previous request sent is read from cache, the rest is written to it.
   */
  private usageFor(content: AssistantMessage["content"]): Usage {
    let prompt = SYSTEM_TOKENS;
    for (const m of this.session.buildSessionContext().messages) prompt += estimateTokens(m);
    prompt = Math.round(prompt * 1.08); // real tokenizers count a little more than chars/4 on code
    const cacheRead = Math.min(this.cachedPrefix, prompt);
    const input = Math.min(prompt - cacheRead, 40 + Math.floor(this.random() * 60));
    const cacheWrite = prompt - cacheRead - input;
    const output = Math.max(
      12,
      Math.round(
        estimateTokens({ role: "assistant", content, provider: "", model: "", stopReason: "stop", timestamp: 0 }) * 1.1,
      ),
    );
    this.cachedPrefix = prompt;
    const [pIn, pOut, pRead, pWrite] = this.model.price.map((p) => p / 1_000_000);
    const cost = {
      input: input * pIn,
      output: output * pOut,
      cacheRead: cacheRead * pRead,
      cacheWrite: cacheWrite * pWrite,
      total: 0,
    };
    cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
    return { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite, cost };
  }
}

function toolArguments(call: ToolStep): Record<string, unknown> {
  switch (call.name) {
    case "read": {
      const args: Record<string, unknown> = { path: call.path };
      if (call.offset !== undefined) args.offset = call.offset;
      if (call.limit !== undefined) args.limit = call.limit;
      return args;
    }
    case "write":
      return { path: call.path, content: call.content };
    case "edit":
      return { path: call.path, edits: call.edits };
    case "bash":
      return { command: call.command };
  }
}
