/**
 * A spinner with the elapsed seconds on stderr while long work runs (a summarizer), on any
 * terminal: it redraws its one line with a carriage return and an erase-line sequence, so it
 * needs no width (a terminal that reports none still gets it). Nothing at all when stderr is
 * not a terminal, so piped output and logs stay clean. It installs no signal handlers: Ctrl-C
 * stays the command's (runInterruptible).
 */

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const ERASE_LINE = "\r\x1b[2K";

export interface SpinnerStream {
  isTTY?: boolean;
  write(text: string): boolean;
}

export interface SpinnerOptions {
  /** how often the line is redrawn (default 100 ms) */
  intervalMs?: number;
  /** the clock (tests) */
  now?: () => number;
}

/** The spinner's line at `elapsedMs`. */
export function spinnerLine(frame: number, text: string, elapsedMs: number): string {
  return `${FRAMES[frame % FRAMES.length]} ${text} ${Math.floor(elapsedMs / 1000)}s`;
}

/** Starts the spinner; returns its stop function (✔ and the time when `ok`), which may be called more than once. */
export function startSpinner(text: string, stream: SpinnerStream = process.stderr, options: SpinnerOptions = {}): (ok: boolean) => void {
  if (!stream.isTTY) return () => {};
  const now = options.now ?? Date.now;
  const started = now();
  let frame = 0;
  const draw = () => stream.write(`${ERASE_LINE}${spinnerLine(frame++, text, now() - started)}`);
  draw();
  const timer = setInterval(draw, options.intervalMs ?? 100);
  timer.unref?.();
  let stopped = false;
  return (ok) => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    stream.write(ok ? `${ERASE_LINE}✔ ${text} ${((now() - started) / 1000).toFixed(1)}s\n` : ERASE_LINE);
  };
}
