/**
 * Running the `bonsai` command the way a user does, from the repository root, for the CLI
 * end-to-end tests: colors off and no debug stack traces, so output compares as plain text.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "../..");
const MAIN = join(ROOT, "src/cli/main.ts");
const ENV = { ...process.env, NO_COLOR: "1", BONSAI_DEBUG: "" };

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `bonsai ARGS…` to the end; a failing exit is a result, not a rejection. */
export function runBonsai(args: readonly string[]): Promise<CliRun> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ["--import", "tsx", MAIN, ...args],
      { cwd: ROOT, env: ENV, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => done({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/**
 * Starts `bonsai ARGS…` and hands the child to `started` at once, so a test can signal it
 * (Ctrl-C) while it works; resolves when it has exited.
 */
export function spawnBonsai(args: readonly string[], started: (child: ChildProcess) => void): Promise<CliRun> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ["--import", "tsx", MAIN, ...args], { cwd: ROOT, env: ENV });
    started(child);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("close", (code) => done({ code, stdout, stderr }));
  });
}
