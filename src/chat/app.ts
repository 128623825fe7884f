/**
 * The terminal of `bonsai chat`: pi-tui components driven by an AgentSession's events. The rules
 * (commands, tree rows, footer, queue, how messages look) live in the pure modules next to this
 * one; this file only wires keys, components and session calls together.
 *
 * Layout, top to bottom: the transcript, a status line (spinner while the model answers or a
 * compaction or branch summary runs), what is queued, the editor (or the /tree selector), the
 * footer. Escape stops whatever runs; text typed meanwhile is queued and sent afterwards (the
 * lines typed in a row as one message). While the model thinks, the last lines of its thinking
 * show above the answer; once the answer comes they collapse to one line.
 */
import { homedir } from "node:os";
import {
  type Component,
  Container,
  Editor,
  Loader,
  Markdown,
  matchesKey,
  ProcessTerminal,
  type Terminal,
  Text,
  TUI,
  truncateToWidth,
} from "@mariozechner/pi-tui";
import type { AgentSession } from "../agent/agent-session.js";
import { CompactionError } from "../agent/compaction-run.js";
import type { AgentSessionEvent } from "../agent/events.js";
import { contentText } from "../messages/preview.js";
import type { AgentMessage, AssistantMessage } from "../format/message-types.js";
import { type ChatInput, helpLines, parseChatInput } from "./commands.js";
import { displayPath, formatFooter } from "./footer.js";
import { autoCompactionEndBlock, autoCompactionStartText, noticeBlock, statusLine } from "./notices.js";
import { type BusyReason, InputQueue, queueNotice, runsWhileBusy } from "./queue.js";
import { sessionInfoLines } from "./session-info.js";
import { style, ui, editorTheme, markdownTheme } from "./theme.js";
import {
  assistantTrailer,
  type DisplayBlock,
  messageBlocks,
  streamingView,
  THINKING_LIVE_LINES,
  toolResultLine,
} from "./transcript.js";
import { TreeFlow } from "./tree-flow.js";
import { errorText } from "../util/error-text.js";

export interface ChatAppOptions {
  session: AgentSession;
  /** whether the session already held a conversation (shown, then continued) */
  resumed: boolean;
  /** one-line notices to show first (settings warnings, skipped lines) */
  notices?: string[];
  /** default: the process's terminal */
  terminal?: Terminal;
}

/** At most this many messages are drawn when the transcript is rebuilt; the file keeps them all. */
const MAX_REDRAWN_MESSAGES = 200;

/** A single line, cut to the width: the footer and the titles above selectors. */
class Line implements Component {
  constructor(private readonly text: (width: number) => string) {}
  render(width: number): string[] {
    return [truncateToWidth(this.text(width), width)];
  }
  invalidate(): void {}
}

/** The last rows of a text as wrapped at the width: thinking in progress, however long its lines. */
class Tail implements Component {
  private readonly inner = new Text("", 1, 0);
  constructor(private readonly maxRows: number) {}
  setText(text: string): void {
    this.inner.setText(text);
  }
  render(width: number): string[] {
    return this.inner.render(width).slice(-this.maxRows);
  }
  invalidate(): void {
    this.inner.invalidate();
  }
}

/** The answer being streamed: its thinking above its text, each set only when it changed. */
interface Streaming {
  thinking: Tail;
  thinkingShown: string;
  component: Markdown;
  text: string;
}

export class ChatApp {
  readonly tui: TUI;
  private readonly session: AgentSession;
  private readonly transcript = new Container();
  private readonly status = new Container();
  private readonly inputArea = new Container();
  private readonly editor: Editor;
  private readonly queue = new InputQueue();
  private readonly tree: TreeFlow;
  private loader: Loader | undefined;
  private streaming: Streaming | undefined;
  private busy: BusyReason | undefined;
  private autoCompaction: "threshold" | "overflow" | undefined;
  /** the answer being streamed is in a thinking block (the spinner says so) */
  private thinking = false;
  private modelRecorded = false;
  private usageMemo:
    | { key: { messages: readonly unknown[]; length: number; leaf: string | null }; usage: ReturnType<AgentSession["getContextUsage"]> }
    | undefined;
  private quitting = false;
  private finished!: () => void;
  readonly done: Promise<void>;

  constructor(private readonly options: ChatAppOptions) {
    this.session = options.session;
    this.tui = new TUI(options.terminal ?? new ProcessTerminal());
    this.editor = new Editor(this.tui, editorTheme);
    this.editor.onSubmit = (text) => this.submit(text);
    this.tree = new TreeFlow({
      tui: this.tui,
      session: this.session,
      inputArea: this.inputArea,
      showEditor: () => this.showEditor(),
      note: (block) => this.add([block]),
      runSummary: (work) => this.runTask("summarizing", work),
      afterMove: (editorText) => {
        this.redraw();
        if (editorText !== undefined) this.editor.setText(editorText);
        this.drainQueue();
      },
      onClosed: () => this.drainQueue(),
    });
    this.done = new Promise((resolve) => {
      this.finished = resolve;
    });
  }

  start(): void {
    const model = this.session.model;
    this.tui.addChild(new Text(ui.dim(`bonsai chat · ${model.provider}/${model.id} · /help for commands · Esc stops · Ctrl+D quits`), 1, 0));
    this.tui.addChild(this.transcript);
    this.tui.addChild(this.status);
    this.tui.addChild(this.inputArea);
    this.tui.addChild(new Line((width) => ui.dim(this.footerText(width))));
    this.inputArea.addChild(this.editor);
    this.tui.setFocus(this.editor);
    this.tui.addInputListener((data) => this.onKey(data));
    this.session.subscribe((event) => this.onEvent(event));
    if (this.options.resumed) {
      this.redraw();
      const shown = this.whereShown() ?? "the session";
      this.add([{ style: "notice", text: `Resumed ${shown} (${this.session.sessionManager.getEntries().length} entries).` }]);
    }
    for (const notice of this.options.notices ?? []) this.add([{ style: "warning", text: notice }]);
    this.tui.start();
  }

  // ---------------------------------------------------------------- input

  private onKey(data: string): { consume?: boolean } | undefined {
    if (matchesKey(data, "escape")) {
      if (this.cancelRunning()) return { consume: true };
      return this.tree.onEscape() ? { consume: true } : undefined;
    }
    if (matchesKey(data, "ctrl+c")) {
      if (this.cancelRunning()) return { consume: true };
      if (this.tree.isOpen()) return undefined;
      if (this.editor.getText() !== "") this.editor.setText("");
      else this.add([{ style: "notice", text: "Ctrl+D or /quit leaves." }]);
      return { consume: true };
    }
    if (matchesKey(data, "ctrl+d") && !this.tree.isOpen() && this.editor.getText() === "") {
      void this.quit();
      return { consume: true };
    }
    return undefined;
  }

  /** Escape: stop the compaction, the branch summary or the answer, whichever runs. */
  private cancelRunning(): boolean {
    if (this.autoCompaction || this.busy === "compacting") {
      this.session.abortCompaction();
      return true;
    }
    if (this.busy === "summarizing" && !this.tree.isOpen()) {
      this.session.abortBranchSummary();
      return true;
    }
    if (this.busy === "answering") {
      void this.session.abort();
      return true;
    }
    return false;
  }

  private submit(text: string): void {
    const input = parseChatInput(text);
    if (input.kind === "empty") return;
    if (input.kind === "message") this.editor.addToHistory(text.trim());
    if (this.busy && !runsWhileBusy(input)) {
      this.queue.push(text);
      this.refreshStatus();
      return;
    }
    this.execute(input);
  }

  private execute(input: ChatInput): void {
    switch (input.kind) {
      case "empty":
        return;
      case "message":
        this.sendMessage(input.text);
        return;
      case "compact":
        this.compact(input.instructions);
        return;
      case "tree":
        this.tree.open();
        return;
      case "label":
        this.label(input.label);
        return;
      case "fork":
        this.fork();
        return;
      case "session":
        this.showSessionInfo();
        return;
      case "help":
        this.add([{ style: "notice", text: helpLines().join("\n") }]);
        return;
      case "quit":
        void this.quit();
        return;
      case "unknown":
        this.add([{ style: "warning", text: input.hint }]);
        return;
    }
  }

  /**
   * Runs what was queued while busy, in the order typed (the lines typed in a row as one message,
   * commands on their own), until something makes the session busy again.
   */
  private drainQueue(): void {
    while (!this.busy && !this.quitting && !this.tree.isOpen() && this.queue.size > 0) {
      const step = this.queue.takeNext()!;
      this.execute(step.kind === "message" ? { kind: "message", text: step.text } : step.input);
    }
    this.refreshStatus();
  }

  // ---------------------------------------------------------------- commands

  private sendMessage(text: string): void {
    this.runTask("answering", async () => {
      const model = this.session.model;
      const recorded = this.session.sessionManager.buildSessionContext().model;
      if (!this.modelRecorded && (recorded?.provider !== model.provider || recorded?.modelId !== model.id)) {
        this.session.setModel(model);
      }
      this.modelRecorded = true;
      await this.session.prompt(text);
    });
  }

  private compact(instructions: string | undefined): void {
    this.runTask("compacting", async () => {
      try {
        const result = await this.session.compact(instructions);
        this.redraw();
        const focus = instructions ? ` with the instructions "${instructions}"` : "";
        this.add([{ style: "success", text: `✓ Compacted: ${result.tokensBefore.toLocaleString("en-US")} tokens summarized${focus}; kept from entry ${result.firstKeptEntryId}.` }]);
      } catch (error) {
        if (error instanceof CompactionError && error.code === "cancelled") this.add([{ style: "warning", text: "Compaction cancelled." }]);
        else this.add([{ style: "error", text: `Compaction failed: ${errorText(error)}` }]);
      }
    });
  }

  private label(text: string | undefined): void {
    const manager = this.session.sessionManager;
    const target = manager.getBranch().findLast((e) => e.type !== "label" && !(e.type === "custom" && e.customType === "bonsai.checkout"));
    if (!target) {
      this.add([{ style: "warning", text: "Nothing to label yet: send a message first." }]);
      return;
    }
    manager.appendLabelChange(target.id, text);
    this.add([{ style: "success", text: text ? `Labelled ${target.id} "${text}".` : `Label removed from ${target.id}.` }]);
  }

  private fork(): void {
    const manager = this.session.sessionManager;
    const leaf = manager.getLeafId();
    if (leaf === null) {
      this.add([{ style: "warning", text: "Nothing to fork yet: send a message first." }]);
      return;
    }
    const before = this.whereShown();
    try {
      // A database session forks into a new id in the same database, a file into a new file beside it.
      manager.createBranchedSession(leaf);
      this.add([{ style: "success", text: `Forked: now writing to ${this.whereShown() ?? "a new in-memory session"} (${before ?? "the old session"} stays as it was).` }]);
    } catch (error) {
      this.add([{ style: "error", text: `Fork failed: ${errorText(error)}` }]);
    }
    this.tui.requestRender();
  }

  private showSessionInfo(): void {
    const manager = this.session.sessionManager;
    const model = this.session.model;
    const lines = sessionInfoLines({
      file: manager.getSessionFile(),
      location: manager.getLocation(),
      entries: manager.getEntries(),
      usage: this.session.getContextUsage(),
      model: `${model.provider}/${model.id}`,
    });
    this.add([{ style: "notice", text: lines.join("\n") }]);
  }

  async quit(): Promise<void> {
    if (this.quitting) return;
    this.quitting = true;
    this.session.abortCompaction();
    this.session.abortBranchSummary();
    // A model that does not answer an abort must not keep the terminal hostage.
    await Promise.race([this.session.abort(), new Promise((resolve) => setTimeout(resolve, 2000))]);
    this.setLoader(undefined);
    this.tui.stop();
    this.finished();
  }

  // ---------------------------------------------------------------- busy work

  /** Runs one piece of work with the spinner shown; its failure becomes an error line. */
  private runTask(reason: BusyReason, work: () => Promise<void>): void {
    this.busy = reason;
    this.refreshStatus();
    void (async () => {
      try {
        await work();
      } catch (error) {
        this.add([{ style: "error", text: errorText(error) }]);
      } finally {
        this.busy = undefined;
        this.autoCompaction = undefined;
        this.thinking = false;
        this.refreshStatus();
        this.drainQueue();
      }
    })();
  }

  private refreshStatus(): void {
    const message = statusLine(this.autoCompaction, this.busy, this.thinking);
    this.setLoader(message);
    const reason = this.autoCompaction ? "compacting" : this.busy;
    const notice = queueNotice(this.queue.lines(), reason);
    if (notice) this.status.addChild(new Text(ui.dim(notice), 1, 0));
    this.tui.requestRender();
  }

  private setLoader(message: string | undefined): void {
    this.loader?.stop();
    this.status.clear();
    this.loader = undefined;
    if (message === undefined) return;
    this.loader = new Loader(this.tui, ui.accent, ui.accent, message);
    this.status.addChild(this.loader);
  }

  // ---------------------------------------------------------------- session events

  private onEvent(event: AgentSessionEvent): void {
    switch (event.type) {
      case "message_start": {
        const message = event.message as AgentMessage;
        if (message.role === "assistant") {
          this.streaming = { thinking: new Tail(THINKING_LIVE_LINES), thinkingShown: "", component: new Markdown("", 1, 0, markdownTheme), text: "" };
          this.transcript.addChild(this.streaming.thinking);
          this.transcript.addChild(this.streaming.component);
        } else if (message.role === "user" || message.role === "custom") {
          this.add(messageBlocks(message));
        }
        break;
      }
      case "message_update":
        if ((event.message as AgentMessage).role === "assistant" && this.streaming) this.showStreaming(event.message as AssistantMessage);
        break;
      case "message_end": {
        const message = event.message as AgentMessage;
        if (message.role !== "assistant") break;
        if (this.streaming) {
          // The whole message as the transcript keeps it: thinking collapsed to its line.
          const shown = this.showStreaming(message, true);
          if (!shown.thinking) this.transcript.removeChild(this.streaming.thinking);
          if (!shown.text) this.transcript.removeChild(this.streaming.component);
          this.streaming = undefined;
          this.add(assistantTrailer(message));
        } else {
          this.add(messageBlocks(message));
        }
        break;
      }
      case "tool_execution_end": {
        const output = contentText((event.result?.content ?? []) as never);
        this.add([{ style: event.isError ? "toolError" : "toolResult", text: `  ${toolResultLine(output, event.isError)}` }]);
        break;
      }
      case "auto_compaction_start":
        this.autoCompaction = event.reason;
        this.add([{ style: "warning", text: autoCompactionStartText(event.reason, this.session.getContextUsage(), this.session.settings.compaction.reserveTokens) }]);
        this.refreshStatus();
        break;
      case "auto_compaction_end":
        this.autoCompaction = undefined;
        if (event.result) this.redraw();
        this.add([autoCompactionEndBlock(event)]);
        this.refreshStatus();
        break;
      default: {
        const notice = noticeBlock(event);
        if (!notice) return;
        this.add([notice]);
      }
    }
    this.tui.requestRender();
  }

  // ---------------------------------------------------------------- transcript

  /** Updates the streamed answer's thinking and text; `ended` collapses the thinking to its line. */
  private showStreaming(message: AssistantMessage, ended = false): { thinking: string; text: string } {
    const streaming = this.streaming!;
    const view = streamingView(message, ended);
    const thinking = view.thinking ? style.thinking(view.thinking.text) : "";
    if (thinking !== streaming.thinkingShown) {
      streaming.thinkingShown = thinking;
      streaming.thinking.setText(thinking);
    }
    if (view.text !== streaming.text) {
      streaming.text = view.text;
      streaming.component.setText(view.text);
    }
    if (view.thinkingNow !== this.thinking) {
      this.thinking = view.thinkingNow;
      this.refreshStatus();
    }
    return { thinking, text: view.text };
  }

  private add(blocks: readonly DisplayBlock[]): void {
    for (const block of blocks) {
      if (block.style === "assistant") {
        this.transcript.addChild(new Markdown(block.text, 1, 0, markdownTheme));
        continue;
      }
      const text = block.style === "user" ? `› ${block.text}` : block.text;
      this.transcript.addChild(new Text(style[block.style](text), 1, block.style === "user" ? 1 : 0));
    }
    this.tui.requestRender();
  }

  /** Draws the transcript again from the agent's context (after a compaction or a move). */
  private redraw(): void {
    this.transcript.clear();
    this.streaming = undefined;
    const messages = this.session.messages;
    const skipped = Math.max(0, messages.length - MAX_REDRAWN_MESSAGES);
    if (skipped > 0) this.add([{ style: "notice", text: `… ${skipped} earlier messages (bonsai context shows them)` }]);
    for (const message of messages.slice(skipped)) this.add(messageBlocks(message));
    this.tui.requestRender(true);
  }

  private showEditor(): void {
    this.inputArea.clear();
    this.inputArea.addChild(this.editor);
    this.tui.setFocus(this.editor);
    this.tui.requestRender();
  }

  /**
   * The footer is drawn on every frame (the spinner animates), but the context size only changes
   * when the context does: it is estimated again only then.
   */
  private usageFor(): ReturnType<AgentSession["getContextUsage"]> {
    const messages = this.session.messages;
    const key = { messages, length: messages.length, leaf: this.session.sessionManager.getLeafId() };
    const memo = this.usageMemo;
    if (!memo || memo.key.messages !== key.messages || memo.key.length !== key.length || memo.key.leaf !== key.leaf) {
      this.usageMemo = { key, usage: this.session.getContextUsage() };
    }
    return this.usageMemo!.usage;
  }

  /** The session file (`~` for the home directory) or database location (no password); undefined in memory. */
  private whereShown(): string | undefined {
    const location = this.session.sessionManager.getLocation();
    return location === undefined ? undefined : displayPath(location, homedir());
  }

  private footerText(width: number): string {
    const model = this.session.model;
    return formatFooter(
      {
        model: `${model.provider}/${model.id}`,
        usage: this.usageFor(),
        location: this.session.sessionManager.getLocation(),
        home: homedir(),
      },
      width,
    );
  }
}
