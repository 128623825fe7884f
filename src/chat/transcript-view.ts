/**
 * The transcript on screen: messages as the session's events bring them, the answer being
 * streamed (its thinking's last lines above its text, collapsed to one line once the answer is
 * there), and the whole transcript drawn again from the agent's context after a compaction or a
 * move. How each message looks is decided in transcript.ts; this turns blocks into components.
 */
import { untrusted } from "../util/terminal-safe.js";
import { breakLongRuns } from "../util/long-runs.js";
import { Container, Markdown, Text, type TUI } from "@mariozechner/pi-tui";
import type { AgentSessionEvent } from "../agent/events.js";
import type { AgentMessage, AssistantMessage } from "../format/message-types.js";
import { contentForDisplay } from "../messages/preview.js";
import { Tail } from "./components.js";
import { markdownTheme, style } from "./theme.js";
import { assistantTrailer, type DisplayBlock, messageBlocks, streamingView, THINKING_LIVE_LINES, toolResultLine } from "./transcript.js";

/** At most this many messages are drawn when the transcript is rebuilt; the file keeps them all. */
const MAX_REDRAWN_MESSAGES = 200;

/** The answer being streamed: its thinking above its text, each set only when it changed. */
interface Streaming {
  thinking: Tail;
  thinkingShown: string;
  component: Markdown;
  text: string;
}

export type MessageEvent = Extract<AgentSessionEvent, { type: "message_start" | "message_update" | "message_end" | "tool_execution_end" }>;

export interface TranscriptViewOptions {
  tui: TUI;
  /** the agent's context, drawn by redraw() */
  messages: () => readonly AgentMessage[];
  /** the streamed answer entered or left a thinking block (the spinner says so) */
  onThinking: (thinking: boolean) => void;
  /** words a failed answer's error (a connection error as the URL and why it could not be reached) */
  describeError?: (message: string) => string;
}

export class TranscriptView {
  readonly container = new Container();
  private streaming: Streaming | undefined;
  /** the error the last failed answer showed: the same error again (a retry) is not repeated */
  private lastError: string | undefined;

  constructor(private readonly options: TranscriptViewOptions) {}

  /** Shows what a message event brings: a new message, the streamed answer so far, a tool's result. */
  show(event: MessageEvent): void {
    switch (event.type) {
      case "message_start": {
        const message = event.message as AgentMessage;
        if (message.role === "assistant") {
          this.streaming = { thinking: new Tail(THINKING_LIVE_LINES), thinkingShown: "", component: new Markdown("", 1, 0, markdownTheme), text: "" };
          this.container.addChild(this.streaming.thinking);
          this.container.addChild(this.streaming.component);
        } else if (message.role === "user" || message.role === "custom") {
          this.lastError = undefined;
          this.add(messageBlocks(message));
        }
        return;
      }
      case "message_update":
        if ((event.message as AgentMessage).role === "assistant" && this.streaming) this.showStreaming(event.message as AssistantMessage);
        return;
      case "message_end": {
        const message = event.message as AgentMessage;
        if (message.role !== "assistant") return;
        if (this.streaming) {
          // The whole message as the transcript keeps it: thinking collapsed to its line.
          const shown = this.showStreaming(message, true);
          if (!shown.thinking) this.container.removeChild(this.streaming.thinking);
          if (!shown.text) this.container.removeChild(this.streaming.component);
          this.streaming = undefined;
          this.add(this.withErrorOnce(message, assistantTrailer(message)));
        } else {
          this.add(this.withErrorOnce(message, messageBlocks(message)));
        }
        return;
      }
      case "tool_execution_end": {
        const output = contentForDisplay((event.result?.content ?? []) as never);
        this.add([{ style: event.isError ? "toolError" : "toolResult", text: `  ${toolResultLine(output, event.isError)}` }]);
        return;
      }
    }
  }

  /** A failed answer's error line, worded by describeError, and left out when the previous failure said the same. */
  private withErrorOnce(message: AssistantMessage, blocks: DisplayBlock[]): DisplayBlock[] {
    if (message.stopReason !== "error") {
      this.lastError = undefined;
      return blocks;
    }
    const raw = message.errorMessage ?? "the model call failed";
    const text = `Error: ${this.options.describeError?.(raw) ?? raw}`;
    const repeated = text === this.lastError;
    this.lastError = text;
    return blocks.flatMap((block) => (block.style !== "error" ? [block] : repeated ? [] : [{ ...block, text }]));
  }

  /** The columns a line of text has (the terminal's, less the padding of each side). */
  textWidth(): number {
    return Math.max(20, this.options.tui.terminal.columns - 2);
  }

  add(blocks: readonly DisplayBlock[]): void {
    for (const block of blocks) {
      // text from the model, the session and tools cannot drive the terminal (util/terminal-safe.ts)
      const safe = breakLongRuns(untrusted(block.text));
      if (block.style === "assistant") {
        this.container.addChild(new Markdown(safe, 1, 0, markdownTheme));
        continue;
      }
      const text = block.style === "user" ? `› ${safe}` : safe;
      this.container.addChild(new Text(style[block.style](text), 1, block.style === "user" ? 1 : 0));
    }
    this.options.tui.requestRender();
  }

  /** Draws the transcript again from the agent's context (after a compaction or a move). */
  redraw(): void {
    this.container.clear();
    this.streaming = undefined;
    const messages = this.options.messages();
    const skipped = Math.max(0, messages.length - MAX_REDRAWN_MESSAGES);
    if (skipped > 0) this.add([{ style: "notice", text: `… ${skipped} earlier messages (bonsai context shows them)` }]);
    for (const message of messages.slice(skipped)) this.add(messageBlocks(message));
    this.options.tui.requestRender(true);
  }

  /** Updates the streamed answer's thinking and text; `ended` collapses the thinking to its line. */
  private showStreaming(message: AssistantMessage, ended = false): { thinking: string; text: string } {
    const streaming = this.streaming!;
    const view = streamingView(message, ended);
    const thinking = view.thinking ? style.thinking(view.thinking.text) : "";
    if (thinking !== streaming.thinkingShown) {
      streaming.thinkingShown = thinking;
      streaming.thinking.setText(breakLongRuns(untrusted(thinking)));
    }
    if (view.text !== streaming.text) {
      streaming.text = view.text;
      streaming.component.setText(breakLongRuns(untrusted(view.text)));
    }
    this.options.onThinking(view.thinkingNow);
    return { thinking, text: view.text };
  }
}
