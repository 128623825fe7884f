/**
 * One measured process of `bench/against-pi.ts`: opens a session file with one library a few
 * times and prints the CPU time of each open (and of the context built after it) as JSON. Runs on
 * whichever Node the parent starts it with, so each library is measured on the Node it needs.
 *
 *   node --expose-gc --import tsx bench/open-child.ts '{"lib":"pi","module":"…/session-manager.js","file":"…","opens":3}'
 */
import { pathToFileURL } from "node:url";
import { cpuMs, peakRssMb } from "./reference-agents.js";

interface Task {
  lib: "bonsai" | "pi";
  /** pi: its dist/core/session-manager.js; bonsai: src/session/manager.ts */
  module: string;
  file: string;
  opens: number;
}

interface Session {
  buildSessionContext(): { messages: unknown[] };
  close?(): void;
}

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

async function main(): Promise<void> {
  const task = JSON.parse(process.argv[2]) as Task;
  const { SessionManager } = (await import(pathToFileURL(task.module).href)) as { SessionManager: { open(path: string, options?: unknown): Session } };
  const open = task.lib === "bonsai" ? (path: string) => SessionManager.open(path, { readOnly: true }) : (path: string) => SessionManager.open(path);
  const openMs: number[] = [];
  const contextMs: number[] = [];
  let messages = 0;
  gc();
  const baseline = peakRssMb();
  let peak = baseline;
  for (let i = 0; i < task.opens; i++) {
    gc();
    const start = process.cpuUsage();
    const session = open(task.file);
    openMs.push(cpuMs(start));
    if (i === 0) peak = peakRssMb();
    const built = process.cpuUsage();
    messages = session.buildSessionContext().messages.length;
    contextMs.push(cpuMs(built));
    session.close?.();
  }
  process.stdout.write(`${JSON.stringify({ openMs, contextMs, messages, openRssMb: peak - baseline, node: process.versions.node })}\n`);
}

main().catch((error) => {
  process.stderr.write(`open-child: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
