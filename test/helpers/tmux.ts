/**
 * Drives the real `bonsai chat` in a terminal: a detached tmux session on its own socket (so
 * tests never meet each other or the user's tmux), keys sent with send-keys, the screen read
 * with capture-pane and polled until what a test waits for appears.
 */
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..", "..");
const MAIN = resolve(ROOT, "src/cli/main.ts");
const TSX = import.meta.resolve("tsx");

let counter = 0;

export function hasTmux(): boolean {
  try {
    execFileSync("tmux", ["-V"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const quote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

export interface ChatTerminalOptions {
  cwd: string;
  /** arguments after `bonsai chat` */
  args: string[];
  /** the whole environment of the program (PATH is added) */
  env: Record<string, string>;
  width?: number;
  height?: number;
}

export class ChatTerminal {
  private socketPath: string | undefined;

  private constructor(
    private readonly socket: string,
    private readonly name: string,
  ) {}

  /** Starts `bonsai chat` in a fresh tmux server; when it exits the pane shows `[exited N]`. */
  static start(options: ChatTerminalOptions): ChatTerminal {
    const socket = `bonsai-chat-${process.pid}-${++counter}`;
    const name = "chat";
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", TERM: "xterm-256color", LC_ALL: "C.UTF-8", ...options.env };
    const command = [
      "env",
      "-i",
      ...Object.entries(env).map(([k, v]) => quote(`${k}=${v}`)),
      quote(process.execPath),
      "--import",
      quote(TSX),
      quote(MAIN),
      "chat",
      ...options.args.map(quote),
    ].join(" ");
    // The shell stays after the program so its exit status and last output can be read.
    const shell = `${command}; echo "[exited $?]"; sleep 600`;
    execFileSync("tmux", [
      "-u",
      "-L",
      socket,
      "-f",
      "/dev/null",
      "new-session",
      "-d",
      "-s",
      name,
      "-x",
      String(options.width ?? 120),
      "-y",
      String(options.height ?? 40),
      "-c",
      options.cwd,
      shell,
    ]);
    const terminal = new ChatTerminal(socket, name);
    terminal.socketPath = terminal.tmux("display-message", "-p", "-t", name, "#{socket_path}").trim() || undefined;
    return terminal;
  }

  private tmux(...args: string[]): string {
    return execFileSync("tmux", ["-u", "-L", this.socket, ...args], { encoding: "utf8" });
  }

  /** The visible screen; with `history`, the scrollback too. */
  screen(history = false): string {
    return this.tmux("capture-pane", "-p", "-t", this.name, ...(history ? ["-S", "-2000"] : []));
  }

  /** Types text literally (no key names), without Enter. */
  type(text: string): void {
    this.tmux("send-keys", "-t", this.name, "-l", text);
  }

  /** Sends key names: Enter, Escape, Up, Down, C-c, … */
  keys(...keys: string[]): void {
    this.tmux("send-keys", "-t", this.name, ...keys);
  }

  /** Types a line and presses Enter. */
  submit(text: string): void {
    this.type(text);
    this.keys("Enter");
  }

  /** Polls the screen until `pattern` shows; fails with the last screen after `timeoutMs`. */
  async waitFor(pattern: RegExp | string | ((screen: string) => boolean), options: { timeoutMs?: number; history?: boolean } = {}): Promise<string> {
    const deadline = Date.now() + (options.timeoutMs ?? 8000);
    let last = "";
    for (;;) {
      last = this.screen(options.history ?? false);
      const found = typeof pattern === "string" ? last.includes(pattern) : typeof pattern === "function" ? pattern(last) : pattern.test(last);
      if (found) return last;
      if (Date.now() > deadline) {
        throw new Error(`timed out waiting for ${String(pattern)}; the screen was:\n${last}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Stops the tmux server and everything in it, and removes its socket (tmux leaves it behind). */
  kill(): void {
    try {
      this.tmux("kill-server");
    } catch {
      // already gone
    }
    if (this.socketPath) rmSync(this.socketPath, { force: true });
  }
}
