/**
 * What is typed while the session is busy (the model answering, a compaction, a branch summary)
 * waits here and runs once the session is idle again, in the order typed: lines typed one after
 * another go as one message, each command runs on its own at its place. Pure data and rules; the
 * app shows the queue and drains it.
 */
import { clip } from "../messages/preview.js";
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

export interface QueuedGroup {
  /** what runs: one command, or the message that joins the lines typed in a row */
  step: QueuedStep;
  /** how many queued steps it takes from the front */
  taken: number;
}

/**
 * What runs next from the front of the queue. Lines typed in a row become ONE message, joined
 * with a blank line in the order typed, so the model reads them together instead of answering the
 * first before it sees the rest (and the user pays for one turn, not several). A command ends the
 * run: it runs on its own, at its place, and what follows it forms the next message.
 */
export function nextGroup(steps: readonly QueuedStep[]): QueuedGroup | undefined {
  const first = steps[0];
  if (!first) return undefined;
  if (first.kind === "command") return { step: first, taken: 1 };
  let taken = 1;
  while (steps[taken]?.kind === "message") taken++;
  if (taken === 1) return { step: first, taken };
  const text = steps
    .slice(0, taken)
    .map((step) => step.text)
    .join("\n\n");
  return { step: { kind: "message", text }, taken };
}

/** The whole queue as it will run, group by group. */
export function groupQueued(steps: readonly QueuedStep[]): QueuedStep[] {
  const groups: QueuedStep[] = [];
  let rest = steps;
  for (let next = nextGroup(rest); next; next = nextGroup(rest)) {
    groups.push(next.step);
    rest = rest.slice(next.taken);
  }
  return groups;
}

/** A typed line as the queue keeps it; undefined for a blank line. */
function queuedStep(text: string): QueuedStep | undefined {
  const input = parseChatInput(text);
  if (input.kind === "empty") return undefined;
  return input.kind === "message" ? { kind: "message", text: input.text } : { kind: "command", input, text: text.trim() };
}

export class InputQueue {
  private items: QueuedStep[] = [];

  /** Queues a submitted line; returns false for lines that are nothing to send (empty). */
  push(text: string): boolean {
    const step = queuedStep(text);
    if (!step) return false;
    this.items.push(step);
    return true;
  }

  get size(): number {
    return this.items.length;
  }

  /** The queued lines as typed, for display. */
  lines(): string[] {
    return this.items.map((item) => item.text);
  }

  /** Takes the oldest step alone. */
  shift(): QueuedStep | undefined {
    return this.items.shift();
  }

  /** Takes what runs next: the messages typed in a row as one, or one command (see nextGroup). */
  takeNext(): QueuedStep | undefined {
    const next = nextGroup(this.items);
    if (!next) return undefined;
    this.items = this.items.slice(next.taken);
    return next.step;
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

/** How much of each queued line the notice quotes. */
const QUOTED_CHARS = 60;

/**
 * The line shown above the editor while lines wait, saying how they will run: lines that go as
 * one message are joined with `+`, separate steps with `|`.
 */
export function queueNotice(lines: readonly string[], reason: BusyReason | undefined): string | undefined {
  const steps = lines.map(queuedStep).filter((step): step is QueuedStep => step !== undefined);
  if (steps.length === 0) return undefined;
  const after =
    reason === "compacting" ? "after the compaction" : reason === "summarizing" ? "after the branch summary" : "when the answer ends";
  const shown: string[] = [];
  let rest: readonly QueuedStep[] = steps;
  for (let next = nextGroup(rest); next; next = nextGroup(rest)) {
    shown.push(
      rest
        .slice(0, next.taken)
        .map((step) => clip(step.text, QUOTED_CHARS))
        .join(" + "),
    );
    rest = rest.slice(next.taken);
  }
  const how =
    shown.length > 1 ? `run in ${shown.length} steps ${after}` : steps.length > 1 ? `sent as one message ${after}` : steps[0].kind === "command" ? `run ${after}` : `sent ${after}`;
  return `Queued (${steps.length}, ${how}): ${shown.join(" | ")}`;
}
