/**
 * Drives the real `bonsai chat` in a terminal: a pseudo-terminal from node-pty (@lydell/node-pty: binaries inside npm packages) runs the program,
 * its output is fed into a headless xterm (@xterm/headless), and the screen is read from that
 * terminal's buffer. Keys are written to the pty as the bytes a real xterm sends for them; the
 * terminal's own answers to the program's queries (cursor position, device attributes, …) go
 * back to the program the same way.
 *
 * When the program exits, `[exited N]` is written on its own line into the terminal (as the
 * shell around the program used to), so tests can wait for it.
 */
import { readdirSync, readFileSync } from "node:fs";
import xterm from "@xterm/headless";
import { type IDisposable, type IPty, spawn } from "@lydell/node-pty";
import { BONSAI_ARGS } from "./bonsai-bin.js";

type XTerm = InstanceType<typeof xterm.Terminal>;

export interface ChatTerminalOptions {
  cwd: string;
  /** arguments after `bonsai chat` */
  args: string[];
  /** the whole environment of the program (PATH, TERM and LC_ALL are added) */
  env: Record<string, string>;
  width?: number;
  height?: number;
}

const CSI = "\x1b[";
const SS3 = "\x1bO";

/** Cursor and editing keys: the final byte of `CSI 1;<mod> X` (and of `SS3 X` in application cursor mode). */
const CURSOR_KEYS: Record<string, string> = { Up: "A", Down: "B", Right: "C", Left: "D", Home: "H", End: "F" };
/** Keys sent as `CSI <n> ~` (`CSI <n>;<mod> ~` with modifiers). */
const TILDE_KEYS: Record<string, number> = {
  IC: 2,
  Insert: 2,
  DC: 3,
  Delete: 3,
  PPage: 5,
  PageUp: 5,
  PgUp: 5,
  NPage: 6,
  PageDown: 6,
  PgDn: 6,
  F5: 15,
  F6: 17,
  F7: 18,
  F8: 19,
  F9: 20,
  F10: 21,
  F11: 23,
  F12: 24,
};
/** F1–F4: `SS3 P`… unmodified, `CSI 1;<mod> P`… with modifiers. */
const PF_KEYS: Record<string, string> = { F1: "P", F2: "Q", F3: "R", F4: "S" };
/** Keys that are one byte (or a fixed sequence) whatever the terminal's modes. */
const PLAIN_KEYS: Record<string, string> = { Enter: "\r", Escape: "\x1b", Tab: "\t", BTab: `${CSI}Z`, BSpace: "\x7f", Space: " " };

/**
 * The bytes xterm sends for a key named as in `send-keys`: `Enter`, `Escape`, `Tab`, `BTab`, `BSpace`, `Space`,
 * `Up`/`Down`/`Left`/`Right`, `Home`/`End`, `PageUp`/`PPage`, `PageDown`/`NPage`, `Insert`/`IC`,
 * `Delete`/`DC`, `F1`–`F12`, any single character, each optionally prefixed by `C-`, `M-` and
 * `S-` (e.g. `C-c`, `M-Enter`, `S-Up`, `C-Left`). `applicationCursor` is DECCKM (`CSI ? 1 h`),
 * which makes unmodified cursor keys `SS3 X` instead of `CSI X`.
 */
export function keyBytes(name: string, applicationCursor = false): string {
  let rest = name;
  let ctrl = false;
  let meta = false;
  let shift = false;
  for (;;) {
    const prefix = /^([CMS])-(?=.)/.exec(rest);
    if (!prefix) break;
    if (prefix[1] === "C") ctrl = true;
    else if (prefix[1] === "M") meta = true;
    else shift = true;
    rest = rest.slice(2);
  }
  const modifier = 1 + (shift ? 1 : 0) + (meta ? 2 : 0) + (ctrl ? 4 : 0);
  const modified = modifier > 1;
  const unknown = () => new Error(`no key named ${JSON.stringify(name)} (see keyBytes in test/helpers/terminal.ts)`);

  if (rest in CURSOR_KEYS) {
    const final = CURSOR_KEYS[rest];
    if (modified) return `${CSI}1;${modifier}${final}`;
    return applicationCursor ? `${SS3}${final}` : `${CSI}${final}`;
  }
  if (rest in TILDE_KEYS) return modified ? `${CSI}${TILDE_KEYS[rest]};${modifier}~` : `${CSI}${TILDE_KEYS[rest]}~`;
  if (rest in PF_KEYS) return modified ? `${CSI}1;${modifier}${PF_KEYS[rest]}` : `${SS3}${PF_KEYS[rest]}`;
  if (rest === "Tab" && shift && !ctrl && !meta) return `${CSI}Z`;
  if (rest in PLAIN_KEYS) {
    let bytes = PLAIN_KEYS[rest];
    if (ctrl) {
      if (rest === "Space") bytes = "\x00";
      else if (rest === "BSpace") bytes = "\x08";
      else throw unknown();
    }
    if (shift && rest !== "Space") throw unknown();
    return meta ? `\x1b${bytes}` : bytes;
  }
  if ([...rest].length === 1) {
    let char = shift ? rest.toUpperCase() : rest;
    if (ctrl) {
      const code = char.toUpperCase().charCodeAt(0);
      if (char === "?") char = "\x7f";
      else if (code >= 0x40 && code <= 0x5f) char = String.fromCharCode(code & 0x1f);
      else if (char === " " || char === "2" || char === "@") char = "\x00";
      else throw unknown();
    }
    return meta ? `\x1b${char}` : char;
  }
  throw unknown();
}

/** The pids of every descendant of `pid` (from /proc; empty where there is none). */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // pid (comm) state ppid …; comm may hold spaces and parentheses, so read after the last ")"
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

const signal = (pid: number, name: NodeJS.Signals) => {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
};

/** Terminals whose program may still run; killed when the test process exits, however it exits. */
const live = new Set<ChatTerminal>();
process.once("exit", () => {
  for (const terminal of live) terminal.kill();
});

export class ChatTerminal {
  /** The program's exit status as a shell reports it (128 + the signal when a signal ended it); undefined while it runs. */
  exitCode: number | undefined;
  /** Resolves with `exitCode` once the program has exited and `[exited N]` is on the screen. */
  readonly exited: Promise<number>;

  private pending = 0;
  private idle: (() => void)[] = [];
  private readonly disposables: IDisposable[] = [];
  private disposed = false;

  private constructor(
    private readonly pty: IPty,
    private readonly term: XTerm,
  ) {
    let markExited!: (code: number) => void;
    this.exited = new Promise((resolve) => {
      markExited = resolve;
    });
    this.disposables.push(
      pty.onData((data) => this.feed(data)),
      // answers to the program's queries (cursor position, device attributes, …)
      term.onData((data) => {
        if (this.exitCode === undefined && !this.disposed) pty.write(data);
      }),
      pty.onExit(({ exitCode, signal }) => {
        const code = signal ? 128 + signal : exitCode;
        this.exitCode = code;
        live.delete(this);
        // node-pty reports the exit after the last output was read; the marker goes after it,
        // on a line of its own as the shell's `echo` put it.
        this.afterWrites(() => {
          this.feed(`${this.term.buffer.active.cursorX === 0 ? "" : "\r\n"}[exited ${code}]\r\n`);
          this.afterWrites(() => markExited(code));
        });
      }),
    );
  }

  /** Starts `bonsai chat` in a fresh pseudo-terminal with exactly the given environment (plus PATH, TERM and LC_ALL). */
  static start(options: ChatTerminalOptions): ChatTerminal {
    const cols = options.width ?? 120;
    const rows = options.height ?? 40;
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", TERM: "xterm-256color", LC_ALL: "C.UTF-8", ...options.env };
    const term = new xterm.Terminal({ cols, rows, allowProposedApi: true, scrollback: 2000 });
    // node-pty adds PWD (= cwd) to the environment, as a shell would.
    const pty = spawn(process.execPath, [...BONSAI_ARGS, "chat", ...options.args], {
      name: env.TERM,
      cols,
      rows,
      cwd: options.cwd,
      env,
    });
    const terminal = new ChatTerminal(pty, term);
    live.add(terminal);
    return terminal;
  }

  /** Every byte the program wrote to the terminal, as written (escape sequences included). */
  output = "";

  /** Writes program output into the headless terminal, counting it until it is parsed. */
  private feed(data: string): void {
    if (this.disposed) return;
    this.output += data;
    this.pending++;
    this.term.write(data, () => {
      this.pending--;
      if (this.pending === 0) for (const resolve of this.idle.splice(0)) resolve();
    });
  }

  /** Runs `then` once everything written so far (and meanwhile) has been parsed. */
  private afterWrites(then: () => void): void {
    if (this.pending === 0 || this.disposed) then();
    else this.idle.push(then);
  }

  /** Resolves once all output received so far is on the screen. */
  settled(): Promise<void> {
    return new Promise((resolve) => this.afterWrites(resolve));
  }

  /**
   * The visible screen as text, a line per row with trailing spaces trimmed, each ended by "\n"
   * (as `capture-pane -p` prints it); with `history`, the scrollback before it too. It holds
   * the output parsed so far; `waitFor` (or `settled`) waits for all output received.
   */
  screen(history = false): string {
    const buffer = this.term.buffer.active;
    const from = history ? 0 : buffer.baseY;
    const to = history ? buffer.length : buffer.baseY + this.term.rows;
    let text = "";
    for (let y = from; y < to; y++) text += `${buffer.getLine(y)?.translateToString(true) ?? ""}\n`;
    return text;
  }

  /** Types text literally (no key names), without Enter. */
  type(text: string): void {
    this.write(text);
  }

  /** Sends keys by name: Enter, Escape, Up, Down, Tab, BSpace, C-c, … (see `keyBytes`). */
  keys(...keys: string[]): void {
    for (const key of keys) this.write(keyBytes(key, this.term.modes.applicationCursorKeysMode));
  }

  /** Types a line and presses Enter. */
  submit(text: string): void {
    this.type(text);
    this.keys("Enter");
  }

  private write(data: string): void {
    if (this.disposed) throw new Error("the terminal was killed");
    if (this.exitCode !== undefined) throw new Error(`the program has exited (${this.exitCode}); the screen was:\n${this.screen()}`);
    this.pty.write(data);
  }

  /**
   * Waits until `pattern` shows on the screen (checked whenever output has been parsed, and not
   * in the middle of a synchronized update); fails with the last screen after `timeoutMs`.
   */
  async waitFor(pattern: RegExp | string | ((screen: string) => boolean), options: { timeoutMs?: number; history?: boolean } = {}): Promise<string> {
    const deadline = Date.now() + (options.timeoutMs ?? 8000);
    const matches = (screen: string) =>
      typeof pattern === "string" ? screen.includes(pattern) : typeof pattern === "function" ? pattern(screen) : pattern.test(screen);
    // a synchronized update (CSI ? 2026 h … l) left open this long is read anyway
    let syncSince: number | undefined;
    let last = "";
    for (;;) {
      await this.settled();
      if (this.disposed) throw new Error(`the terminal was killed while waiting for ${String(pattern)}; the screen was:\n${last}`);
      const inSync = this.term.modes.synchronizedOutputMode;
      syncSince = inSync ? (syncSince ?? Date.now()) : undefined;
      if (!inSync || Date.now() - syncSince! > 500) {
        last = this.screen(options.history ?? false);
        if (matches(last)) return last;
      }
      if (Date.now() > deadline) {
        throw new Error(`timed out waiting for ${String(pattern)}; the screen was:\n${last}`);
      }
      // until the next output is parsed, or a while (a function pattern may depend on more than the screen)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, 50);
        const parsed = this.term.onWriteParsed(done);
        function done() {
          clearTimeout(timer);
          parsed.dispose();
          resolve();
        }
      });
    }
  }

  /**
   * Ends the program and every process under it (SIGKILL to its process group and to each
   * descendant), and disposes the terminal. Resolves once the pty has reported the exit (or
   * after two seconds); the killing itself is done before this returns.
   */
  kill(): Promise<void> {
    live.delete(this);
    const pid = this.pty.pid;
    const running = this.exitCode === undefined;
    if (running) {
      const below = descendants(pid);
      // the program leads its own session and process group (forkpty); tools it starts may not stay in it
      signal(-pid, "SIGKILL");
      for (const child of below) signal(child, "SIGKILL");
      signal(pid, "SIGKILL");
    }
    const gone = running
      ? new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 2000);
          timer.unref();
          this.pty.onExit(() => {
            clearTimeout(timer);
            resolve();
          });
        })
      : Promise.resolve();
    if (!this.disposed) {
      this.disposed = true;
      for (const resolve of this.idle.splice(0)) resolve();
      return gone.then(() => {
        for (const disposable of this.disposables) disposable.dispose();
        this.term.dispose();
      });
    }
    return gone;
  }
}
