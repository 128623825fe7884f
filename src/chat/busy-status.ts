/**
 * What the chat is busy with, and the status line that shows it: a spinner while the model
 * answers (saying whether it thinks), while a compaction or a branch summary runs, and the
 * queued lines under it. Work started here runs one piece at a time; when it ends, however it
 * ends, the status clears and the queue gets its turn. The wording is in notices.ts and queue.ts.
 */
import { Container, Loader, Text, type TUI } from "@mariozechner/pi-tui";
import type { AutoCompactionReason } from "../agent/events.js";
import { errorText } from "../util/error-text.js";
import { statusLine } from "./notices.js";
import { type BusyReason, type InputQueue, queueNotice } from "./queue.js";
import { ui } from "./theme.js";
import type { DisplayBlock } from "./transcript.js";

export interface BusyStatusOptions {
  tui: TUI;
  queue: InputQueue;
  /** shows a failed piece of work's error line */
  note: (blocks: readonly DisplayBlock[]) => void;
  /** the session is free again: run what was queued */
  onIdle: () => void;
}

export class BusyStatus {
  readonly container = new Container();
  private loader: Loader | undefined;
  private reason: BusyReason | undefined;
  private autoCompactionReason: AutoCompactionReason | undefined;
  /** the answer being streamed is in a thinking block */
  private thinking = false;
  /** when what the status line shows started, and the timer that counts its seconds */
  private since: { what: string; at: number } | undefined;
  private ticker: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly options: BusyStatusOptions) {}

  /** What the chat itself started and waits for; undefined when idle. */
  get busy(): BusyReason | undefined {
    return this.reason;
  }

  /** An automatic compaction runs (the session started it during an answer). */
  get autoCompaction(): AutoCompactionReason | undefined {
    return this.autoCompactionReason;
  }

  /** Records an automatic compaction starting (a reason) or ending; refresh() shows it. */
  setAutoCompaction(reason: AutoCompactionReason | undefined): void {
    this.autoCompactionReason = reason;
  }

  setThinking(thinking: boolean): void {
    if (thinking === this.thinking) return;
    this.thinking = thinking;
    this.refresh();
  }

  /** Runs one piece of work with the spinner shown; its failure becomes an error line. */
  run(reason: BusyReason, work: () => Promise<void>): void {
    this.reason = reason;
    this.refresh();
    void (async () => {
      try {
        await work();
      } catch (error) {
        this.options.note([{ style: "error", text: errorText(error) }]);
      } finally {
        this.reason = undefined;
        this.autoCompactionReason = undefined;
        this.thinking = false;
        this.refresh();
        this.options.onIdle();
      }
    })();
  }

  refresh(): void {
    const what = statusLine(this.autoCompactionReason, this.reason, this.thinking);
    const elapsed = this.elapsedFor(what);
    this.setLoader(what === undefined ? undefined : statusLine(this.autoCompactionReason, this.reason, this.thinking, elapsed));
    const reason = this.autoCompactionReason ? "compacting" : this.reason;
    const notice = queueNotice(this.options.queue.lines(), reason);
    if (notice) this.container.addChild(new Text(ui.dim(notice), 1, 0));
    this.options.tui.requestRender();
  }

  /** Stops the spinner for good (the chat is closing). */
  stop(): void {
    this.setLoader(undefined);
    this.elapsedFor(undefined);
  }

  /** Seconds since `what` started showing (thinking and working count as one answer); runs the ticker while something shows. */
  private elapsedFor(what: string | undefined): number {
    const kind = what?.replace(/^(Thinking|Working)…/, "Answering…");
    if (kind === undefined) {
      if (this.ticker) clearInterval(this.ticker);
      this.ticker = undefined;
      this.since = undefined;
      return 0;
    }
    if (this.since?.what !== kind) this.since = { what: kind, at: Date.now() };
    this.ticker ??= setInterval(() => this.tick(), 1000);
    return (Date.now() - this.since.at) / 1000;
  }

  private tick(): void {
    const message = statusLine(this.autoCompactionReason, this.reason, this.thinking, this.since ? (Date.now() - this.since.at) / 1000 : 0);
    if (message !== undefined) this.loader?.setMessage(message);
    this.options.tui.requestRender();
  }

  private setLoader(message: string | undefined): void {
    this.loader?.stop();
    this.container.clear();
    this.loader = undefined;
    if (message === undefined) return;
    this.loader = new Loader(this.options.tui, ui.accent, ui.accent, message);
    this.container.addChild(this.loader);
  }
}
