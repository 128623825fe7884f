/** Runs a server in a child process (`node ARGS…`) and waits for the JSON log line that gives its URL. */
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";

export const REPO_DIR = resolve(import.meta.dirname, "../..");

export interface ChildServer {
  child: ChildProcess;
  url: string;
  /** every JSON line the server logged so far */
  logs: Record<string, unknown>[];
  stderr: () => string;
  exited: Promise<number | null>;
}

export function spawnServer(args: string[], env: Record<string, string> = {}, timeoutMs = 15_000): Promise<ChildServer> {
  const child = spawn(process.execPath, args, {
    cwd: REPO_DIR,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: Record<string, unknown>[] = [];
  let stderr = "";
  let buffered = "";
  const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
  return new Promise((ready, fail) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      fail(new Error(`server did not start within ${timeoutMs} ms: ${stderr}`));
    }, timeoutMs);
    child.stderr?.on("data", (chunk) => {
      stderr += chunk;
    });
    child.stdout?.on("data", (chunk) => {
      const lines = (buffered + chunk).split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        try {
          const entry = JSON.parse(line) as Record<string, unknown>;
          logs.push(entry);
          if (entry.event === "listening") {
            clearTimeout(timer);
            ready({ child, url: String(entry.url), logs, stderr: () => stderr, exited });
          }
        } catch {
          // not a log line
        }
      }
    });
    exited.then((code) => {
      clearTimeout(timer);
      fail(new Error(`server exited with ${code} before listening: ${stderr}`));
    });
  });
}
