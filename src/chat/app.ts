/**
 * The terminal of `bonsai chat`: pi-tui components driven by an AgentSession's events. This file
 * lays the screen out and wires the parts together; each concern has its own module: keys and
 * the queue (input-handler), what a command does (command-runner), the spinner and busy work
 * (busy-status), the transcript (transcript-view), /tree (tree-flow), the footer (footer-line),
 * and which session is written (session-switch). The rules they apply are pure modules
 * (commands, queue, transcript, notices, footer, tree-view).
 *
 * Layout, top to bottom: the transcript, a status line (spinner while the model answers or a
 * compaction or branch summary runs), what is queued, the editor (or the /tree selector), the
 * footer. Escape stops whatever runs; text typed meanwhile is queued and sent afterwards (the
 * lines typed in a row as one message). While the model thinks, the last lines of its thinking
 * show above the answer; once the answer comes they collapse to one line.
 */
import { untrusted } from "../util/terminal-safe.js";
import { Container, Editor, ProcessTerminal, type Terminal, Text, TUI } from "@mariozechner/pi-tui";
import type { AgentSession } from "../agent/agent-session.js";
import type { AgentSessionEvent } from "../agent/events.js";
import { BusyStatus } from "./busy-status.js";
import type { ChatStart } from "./chat-start.js";
import { connectionErrorText, type FetchFailures, isConnectionError } from "./connection-error.js";
import { CommandRunner } from "./command-runner.js";
import { footerLine } from "./footer-line.js";
import { InputHandler } from "./input-handler.js";
import { autoCompactionEndBlock, autoCompactionStartText, noticeBlock } from "./notices.js";
import { InputQueue } from "./queue.js";
import { resumedNotice } from "./session-switch.js";
import { editorTheme, ui } from "./theme.js";
import type { DisplayBlock } from "./transcript.js";
import { reviewInEditor } from "./summary-review.js";
import { TranscriptView } from "./transcript-view.js";
import { TreeFlow } from "./tree-flow.js";

export interface ChatAppOptions {
  session: AgentSession;
  /** whether the session already held a conversation (shown, then continued) */
  resumed: boolean;
  /** one-line notices to show first (settings warnings, skipped lines) */
  notices?: string[];
  /** default: the process's terminal */
  terminal?: Terminal;
  /** how the model was reached (base URL, window), recorded with it for --continue */
  chatStart?: ChatStart;
  /** why requests to a server failed at the network level, to name the URL and the cause */
  fetchFailures?: FetchFailures;
}

export class ChatApp {
  readonly tui: TUI;
  private readonly session: AgentSession;
  private readonly inputArea = new Container();
  private readonly editor: Editor;
  private readonly transcript: TranscriptView;
  private readonly status: BusyStatus;
  private readonly tree: TreeFlow;
  private readonly input: InputHandler;
  private readonly commands: CommandRunner;
  private quitting = false;
  private finished!: () => void;
  readonly done: Promise<void>;

  constructor(private readonly options: ChatAppOptions) {
    const session = options.session;
    this.session = session;
    this.tui = new TUI(options.terminal ?? new ProcessTerminal());
    this.editor = new Editor(this.tui, editorTheme);
    const queue = new InputQueue();
    const note = (blocks: readonly DisplayBlock[]) => this.transcript.add(blocks);
    const quit = () => void this.quit();
    this.status = new BusyStatus({ tui: this.tui, queue, note, onIdle: () => this.input.drainQueue() });
    this.transcript = new TranscriptView({
      tui: this.tui,
      messages: () => session.messages,
      onThinking: (thinking) => this.status.setThinking(thinking),
      describeError: (message) => this.describeError(message),
    });
    this.tree = new TreeFlow({
      tui: this.tui,
      session,
      inputArea: this.inputArea,
      showEditor: () => this.showEditor(),
      note: (block) => note([block]),
      runSummary: (work) => this.status.run("summarizing", work),
      afterMove: (editorText) => {
        this.transcript.redraw();
        if (editorText !== undefined) this.editor.setText(editorText);
        this.input.drainQueue();
      },
      onClosed: () => this.input.drainQueue(),
    });
    const { transcript, status, tree } = this;
    const review = reviewInEditor({ tui: this.tui, editor: this.editor, note });
    this.commands = new CommandRunner({ session, transcript, status, tree, quit, chatStart: options.chatStart, review });
    this.input = new InputHandler({
      session,
      editor: this.editor,
      tree,
      status,
      queue,
      note,
      execute: (input) => this.commands.execute(input),
      quit,
      isQuitting: () => this.quitting,
    });
    this.editor.onSubmit = (text) => this.input.submit(text);
    this.done = new Promise((resolve) => {
      this.finished = resolve;
    });
  }

  start(): void {
    const model = this.session.model;
    this.tui.addChild(new Text(ui.dim(`bonsai chat · ${untrusted(`${model.provider}/${model.id}`)} · /help for commands · Esc stops · Ctrl+D quits`), 1, 0));
    this.tui.addChild(this.transcript.container);
    this.tui.addChild(this.status.container);
    this.tui.addChild(this.inputArea);
    this.tui.addChild(footerLine(this.session));
    this.inputArea.addChild(this.editor);
    this.tui.setFocus(this.editor);
    this.tui.addInputListener((data) => this.input.onKey(data));
    this.session.subscribe((event) => this.onEvent(event));
    if (this.options.resumed) {
      this.transcript.redraw();
      this.transcript.add([resumedNotice(this.session.sessionManager)]);
    }
    for (const notice of this.options.notices ?? []) this.transcript.add([{ style: "warning", text: notice }]);
    this.tui.start();
  }

  async quit(): Promise<void> {
    if (this.quitting) return;
    this.quitting = true;
    this.session.abortCompaction();
    this.session.abortBranchSummary();
    // A model that does not answer an abort must not keep the terminal hostage.
    await Promise.race([this.session.abort(), new Promise((resolve) => setTimeout(resolve, 2000))]);
    this.status.stop();
    this.tui.stop();
    this.finished();
  }

  private onEvent(event: AgentSessionEvent): void {
    switch (event.type) {
      case "message_start":
      case "message_update":
      case "message_end":
      case "tool_execution_end":
        this.transcript.show(event);
        break;
      case "auto_compaction_start":
        this.status.setAutoCompaction(event.reason);
        this.transcript.add([
          { style: "warning", text: autoCompactionStartText(event.reason, this.session.getContextUsage(), this.session.settings.compaction) },
        ]);
        this.status.refresh();
        break;
      case "auto_compaction_end":
        this.status.setAutoCompaction(undefined);
        if (event.result) this.transcript.redraw();
        this.transcript.add([autoCompactionEndBlock(event)]);
        this.status.refresh();
        break;
      default: {
        const notice = noticeBlock(event, (message) => this.describeError(message));
        if (!notice) return;
        this.transcript.add([notice]);
      }
    }
    this.tui.requestRender();
  }

  /** A connection error as the URL the model is reached at and, when the fetch said, why it failed. */
  private describeError(message: string): string {
    if (!isConnectionError(message)) return message;
    const url = this.session.model.baseUrl || `${this.session.model.provider}'s API`;
    return connectionErrorText(url, this.options.fetchFailures?.causeFor(url));
  }

  private showEditor(): void {
    this.inputArea.clear();
    this.inputArea.addChild(this.editor);
    this.tui.setFocus(this.editor);
    this.tui.requestRender();
  }
}
