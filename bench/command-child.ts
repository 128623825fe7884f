/**
 * One measured process of `bench/commands.ts`: runs one command once, bonsai's through its own
 * CLI program (output discarded) or pi's library equivalent, and prints its CPU time and peak
 * memory as JSON. Modules are loaded before the clock starts, for both.
 *
 *   node --import tsx bench/command-child.ts '{"lib":"bonsai","op":"export","target":"…","out":"…"}'
 */
import { pathToFileURL } from "node:url";
import { join } from "node:path";
import { cpuMs, PI16, PI16_CORE, peakRssMb } from "./reference-agents.js";

interface Task {
  lib: "bonsai" | "pi";
  op: "export" | "tree" | "ls";
  /** a session file (export, tree) or a folder of them (ls) */
  target: string;
  /** where an export is written */
  out: string;
}


async function bonsai(task: Task): Promise<() => Promise<void>> {
  const { buildProgram } = await import("../src/cli/program.js");
  // what the export command imports when it runs
  await Promise.all([import("../src/view/export.js"), import("../src/view/page-asset.js").then((m) => m.pageAsset())]);
  const args = { export: ["export", task.target, "--html", "-o", task.out], tree: ["tree", task.target], ls: ["ls", task.target] }[task.op];
  return async () => {
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = (() => true) as typeof process.stdout.write;
    try {
      await buildProgram().parseAsync(["node", "bonsai", ...args]);
    } finally {
      process.stdout.write = write;
    }
  };
}

async function pi(task: Task): Promise<() => Promise<void>> {
  const { SessionManager } = await import(pathToFileURL(PI16).href);
  const { exportFromFile } = await import(pathToFileURL(join(PI16_CORE, "export-html/index.js")).href);
  if (task.op === "export") return async () => void (await exportFromFile(task.target, { outputPath: task.out }));
  // pi has no tree command: what its /tree needs, the session opened and its tree built
  if (task.op === "tree") return async () => void SessionManager.open(task.target).getTree();
  return async () => void (await SessionManager.listAll(task.target));
}

async function main(): Promise<void> {
  const task = JSON.parse(process.argv[2]) as Task;
  const run = await (task.lib === "bonsai" ? bonsai(task) : pi(task));
  const start = process.cpuUsage();
  await run();
  const ms = cpuMs(start);
  if (process.exitCode) throw new Error(`bonsai ${task.op} failed`);
  process.stdout.write(`${JSON.stringify({ ms, rssMb: peakRssMb() })}\n`);
}

main().catch((error) => {
  process.stderr.write(`command-child: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
