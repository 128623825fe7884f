/**
 * What is typed while the session is busy (the model answering, a compaction, a branch summary)
 * waits here and is sent, in the order typed, once the session is idle again. Pure data and
 * rules; the app shows the queue and drains it.
 */
import { type ChatInput, parseChatInput } from "./commands.js";

export type BusyReason = "answering" | "compacting" | "summarizing";

export type QueuedStep = { kind: "message"; text: string } | { kind: "command"; input: ChatInput; text: string };

/**
 * Commands that only read or leave run at once even while busy; everything else waits, so a
 * second prompt, compaction or move never races the one in progress.
 */
export function runsWhileBusy(input: ChatInput): boolean {
  return input.kind === "quit" || input.kind === "session" || input.kind === "help" || input.kind === "unknown" || input.kind === "empty";
}

export class InputQueue {
  private items: QueuedStep[] = [];

  /** Queues a submitted line; returns false for lines that are nothing to send (empty). */
  push(text: string): boolean {
    const input = parseChatInput(text);
    if (input.kind === "empty") return false;
    this.items.push(input.kind === "message" ? { kind: "message", text: input.text } : { kind: "command", input, text: text.trim() });
    return true;
  }

  get size(): number {
    return this.items.length;
  }

  /** The queued lines as typed, for display. */
  lines(): string[] {
    return this.items.map((item) => item.text);
  }

  /** Takes the next step to run, oldest first. */
  shift(): QueuedStep | undefined {
    return this.items.shift();
  }

  /** Puts steps back in front (a step failed: what was not sent stays queued, in order). */
  restore(steps: readonly QueuedStep[]): void {
    this.items = [...steps, ...this.items];
  }

  clear(): QueuedStep[] {
    const taken = this.items;
    this.items = [];
    return taken;
  }
}

/** The line shown above the editor while messages wait. */
export function queueNotice(lines: readonly string[], reason: BusyReason | undefined): string | undefined {
  if (lines.length === 0) return undefined;
  const after =
    reason === "compacting" ? "after the compaction" : reason === "summarizing" ? "after the branch summary" : "when the answer ends";
  const shown = lines.map((line) => (line.length > 60 ? `${line.slice(0, 59)}…` : line)).join(" | ");
  return `Queued (${lines.length}, sent ${after}): ${shown}`;
}
