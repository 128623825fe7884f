/**
 * A spinner with elapsed seconds on stderr while a summarizer works, only for a terminal that
 * reports its width (the spinner measures lines by it). nanospinner is imported here, on first
 * use, so commands that never summarize do not load it.
 */

/** Starts the spinner; returns its stop function, which may be called more than once. */
export async function startSpinner(text: string): Promise<(ok: boolean) => void> {
  if (!process.stderr.isTTY || !(process.stderr.columns > 0)) return () => {};
  const { createSpinner } = await import("nanospinner");
  const started = Date.now();
  const own = { SIGINT: new Set(process.listeners("SIGINT")), SIGTERM: new Set(process.listeners("SIGTERM")) };
  const spinner = createSpinner(text, { stream: process.stderr }).start();
  // nanospinner exits the process on Ctrl-C; the command's own handler cancels cleanly instead.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    for (const listener of process.listeners(signal)) if (!own[signal].has(listener)) process.off(signal, listener);
  }
  const timer = setInterval(() => spinner.update({ text: `${text} ${Math.floor((Date.now() - started) / 1000)}s` }), 1000);
  let stopped = false;
  return (ok) => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    const done = `${text} ${((Date.now() - started) / 1000).toFixed(1)}s`;
    if (ok) spinner.success({ text: done });
    else spinner.stop();
  };
}
