/**
 * What the keyboard and the editor do in the chat. Escape and Ctrl+C stop whatever runs (a
 * compaction, a branch summary, the answer); Ctrl+C otherwise clears the editor, and Ctrl+D on
 * an empty editor quits. A submitted line runs at once when the session is free or the command
 * is harmless while busy; otherwise it waits in the queue, which drains in the order typed once
 * the session is free again (queue.ts has the rules).
 */
import { type Editor, matchesKey } from "@mariozechner/pi-tui";
import type { AgentSession } from "../agent/agent-session.js";
import type { BusyStatus } from "./busy-status.js";
import { type ChatInput, parseChatInput } from "./commands.js";
import { type InputQueue, runsWhileBusy } from "./queue.js";
import type { DisplayBlock } from "./transcript.js";
import type { TreeFlow } from "./tree-flow.js";

export interface InputHandlerOptions {
  session: AgentSession;
  editor: Editor;
  tree: TreeFlow;
  status: BusyStatus;
  queue: InputQueue;
  note: (blocks: readonly DisplayBlock[]) => void;
  execute: (input: ChatInput) => void;
  quit: () => void;
  isQuitting: () => boolean;
}

export class InputHandler {
  constructor(private readonly options: InputHandlerOptions) {}

  /** A key the focused component sees after us; `consume` keeps it from the component. */
  onKey(data: string): { consume?: boolean } | undefined {
    const { editor, tree } = this.options;
    if (matchesKey(data, "escape")) {
      if (this.cancelRunning()) return { consume: true };
      return tree.onEscape() ? { consume: true } : undefined;
    }
    if (matchesKey(data, "ctrl+c")) {
      if (this.cancelRunning()) return { consume: true };
      if (tree.isOpen()) return undefined;
      if (editor.getText() !== "") editor.setText("");
      else this.options.note([{ style: "notice", text: "Ctrl+D or /quit leaves." }]);
      return { consume: true };
    }
    if (matchesKey(data, "ctrl+d") && !tree.isOpen() && editor.getText() === "") {
      this.options.quit();
      return { consume: true };
    }
    return undefined;
  }

  submit(text: string): void {
    const input = parseChatInput(text);
    if (input.kind === "empty") return;
    if (input.kind === "message") this.options.editor.addToHistory(text.trim());
    if (this.options.status.busy && !runsWhileBusy(input)) {
      this.options.queue.push(text);
      this.options.status.refresh();
      return;
    }
    this.options.execute(input);
  }

  /**
   * Runs what was queued while busy, in the order typed (the lines typed in a row as one message,
   * commands on their own), until something makes the session busy again.
   */
  drainQueue(): void {
    const { status, queue, tree } = this.options;
    while (!status.busy && !this.options.isQuitting() && !tree.isOpen() && queue.size > 0) {
      const step = queue.takeNext()!;
      this.options.execute(step.kind === "message" ? { kind: "message", text: step.text } : step.input);
    }
    status.refresh();
  }

  /** Escape: stop the compaction, the branch summary or the answer, whichever runs. */
  private cancelRunning(): boolean {
    const { session, status, tree } = this.options;
    if (status.autoCompaction || status.busy === "compacting") {
      session.abortCompaction();
      return true;
    }
    if (status.busy === "summarizing" && !tree.isOpen()) {
      session.abortBranchSummary();
      return true;
    }
    if (status.busy === "answering") {
      void session.abort();
      return true;
    }
    return false;
  }
}
