/**
 * Running the `bonsai` command the way a user does, from the repository root, for the CLI
 * end-to-end tests: colors off and no debug stack traces, so output compares as plain text.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { BONSAI_ARGS } from "./bonsai-bin.js";

export const ROOT = resolve(import.meta.dirname, "../..");
const ENV = { ...process.env, NO_COLOR: "1", BONSAI_DEBUG: "" };

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `bonsai ARGS…` to the end (colors off, unless `env` says otherwise); a failing exit is a result, not a rejection. */
export function runBonsai(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [...BONSAI_ARGS, ...args],
      { cwd: ROOT, env: { ...ENV, ...env }, maxBuffer: 64 * 1024 * 1024 },
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
    const child = spawn(process.execPath, [...BONSAI_ARGS, ...args], { cwd: ROOT, env: ENV });
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

/**
 * Runs `bonsai` against a summarization endpoint on 127.0.0.1 that never answers, and presses
 * Ctrl-C once, as soon as the first request arrives: the summary is in flight when the interrupt lands.
 * `args` receives the endpoint's URL.
 */
export async function interruptDuringSummary(args: (url: string) => readonly string[]): Promise<{ run: CliRun; requests: number }> {
  let child: ChildProcess | undefined;
  let requests = 0;
  const server = createServer((request) => {
    requests++;
    request.resume();
    // once, as a user presses it: a split turn sends two requests, and a second press landing after
    // bonsai handled the first would end the process by the signal instead of its cleanup
    if (requests === 1) child?.kill("SIGINT");
  });
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/summarize`;
  try {
    const run = await spawnBonsai(args(url), (proc) => {
      child = proc;
    });
    return { run, requests };
  } finally {
    server.closeAllConnections();
    server.close();
  }
}
