/**
 * The tools `bonsai chat` gives the model: read, write and edit files, confined to the working
 * directory, and (only when asked for) bash. A path that leaves the directory, lexically (`../x`,
 * an absolute path elsewhere), through a symlink, or through a hard link, is refused, and so is
 * anything that is not a regular file; what is checked is the descriptor that is then read or
 * written (confine.ts). bash runs in a bubblewrap sandbox where the machine has one, and
 * otherwise with the user's rights, and says which (tools-sandbox.ts). docs/ARCHITECTURE.md,
 * layer 10. pi-agent-core's AgentTool shape; only its types are imported, so loading this module
 * stays cheap.
 */
import { spawn } from "node:child_process";
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import type { AgentTool, AgentToolResult } from "@mariozechner/pi-agent-core";
import type { TSchema } from "@mariozechner/pi-ai";
import { openForEdit, openForRead, openForWrite, readAll, replaceContent, ToolInputError } from "./confine.js";
import { bwrapArgv, describeSandbox, type Sandbox, type SandboxKind, sandboxFor } from "./tools-sandbox.js";

export { isInside, resolveInside, ToolInputError } from "./confine.js";
export { bwrapArgv, detectSandbox, type Sandbox, type SandboxKind } from "./tools-sandbox.js";

export const READ_MAX_LINES = 2000;
export const READ_MAX_BYTES = 50 * 1024;
export const BASH_MAX_OUTPUT = 30 * 1024;
export const BASH_DEFAULT_TIMEOUT_S = 120;

/**
 * The working directory's real path, taken at the first use and kept: a directory swapped for a
 * symlink later does not move the boundary.
 */
type Root = () => string;
function pinnedRoot(cwd: string): Root {
  let real: string | undefined;
  return () => (real ??= realpathSync(cwd));
}

function text(content: string, details: unknown = {}): AgentToolResult<unknown> {
  return { content: [{ type: "text", text: content }], details };
}

interface ToolSpec {
  name: string;
  description: string;
  /** JSON schema of each parameter, all of them required unless listed in `optional` */
  params: Record<string, object>;
  optional?: readonly string[];
  run(args: Args, signal: AbortSignal | undefined): Promise<AgentToolResult<unknown>>;
}

/** An AgentTool from its spec: label = name, a closed object schema, arguments as a plain record. */
function defineTool(spec: ToolSpec): AgentTool {
  const required = Object.keys(spec.params).filter((key) => !spec.optional?.includes(key));
  const parameters = { type: "object", properties: spec.params, required, additionalProperties: false } as unknown as TSchema;
  return {
    name: spec.name,
    label: spec.name,
    description: spec.description,
    parameters,
    execute: (_id, params, signal) => spec.run(params as Args, signal),
  };
}

/** The `path` parameter every file tool takes. */
const PATH_PARAM = { type: "string", description: "path relative to the working directory" };

type Args = Record<string, unknown>;
const str = (args: Args, key: string): string => {
  const value = args[key];
  if (typeof value !== "string") throw new ToolInputError(`${key} must be a string`);
  return value;
};
const optInt = (args: Args, key: string): number | undefined => {
  const value = args[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) throw new ToolInputError(`${key} must be a positive integer`);
  return value;
};

/**
 * Lines `offset…offset+limit-1` (1-based) of a text fed a line at a time, cut at READ_MAX_LINES /
 * READ_MAX_BYTES with a note; every line is counted, only the wanted ones are kept.
 */
class LineWindow {
  private readonly picked: string[] = [];
  private readonly wanted: number;
  private bytes = 0;
  private full = false;
  private count = 0;

  constructor(
    private readonly offset: number,
    limit: number | undefined,
  ) {
    this.wanted = Math.min(limit ?? READ_MAX_LINES, READ_MAX_LINES);
  }

  take(line: string): void {
    this.count++;
    if (this.full || this.count < this.offset) return;
    const size = Buffer.byteLength(line) + 1;
    if (this.picked.length >= this.wanted || (this.bytes + size > READ_MAX_BYTES && this.picked.length > 0)) this.full = true;
    else {
      this.picked.push(line);
      this.bytes += size;
    }
  }

  result(): string {
    if (this.offset > this.count) throw new ToolInputError(`offset ${this.offset} is past the end (${this.count} lines)`);
    const last = this.offset - 1 + this.picked.length;
    const out = this.picked.join("\n");
    return last < this.count ? `${out}\n\n[lines ${this.offset}-${last} of ${this.count}; read on with offset=${last + 1}]` : out;
  }
}

/** Lines `offset…offset+limit-1` (1-based) of a text, cut at READ_MAX_LINES / READ_MAX_BYTES with a note. */
export function sliceForRead(content: string, offset = 1, limit?: number): string {
  const window = new LineWindow(offset, limit);
  for (const line of content.split("\n")) window.take(line);
  return window.result();
}

/** Files larger than this are read a window at a time, never whole. */
export const READ_WHOLE_MAX_BYTES = 16 * 1024 * 1024;

/**
 * The lines sliceForRead would give of a file too large to hold: read in chunks, keeping only the
 * wanted lines (within READ_MAX_LINES and READ_MAX_BYTES) and counting the rest.
 */
export async function readLineWindow(handle: { read(b: Buffer, o: number, l: number, p: number): Promise<{ bytesRead: number }> }, offset: number, limit: number | undefined, signal?: AbortSignal): Promise<string> {
  const window = new LineWindow(offset, limit);
  const decoder = new TextDecoder();
  const chunk = Buffer.allocUnsafe(1 << 20);
  let partial = "";
  for (let at = 0; ; ) {
    if (signal?.aborted) throw new Error("read stopped: the run was stopped");
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, at);
    if (bytesRead === 0) break;
    at += bytesRead;
    const lines = (partial + decoder.decode(chunk.subarray(0, bytesRead), { stream: true })).split("\n");
    partial = lines.pop()!;
    for (const line of lines) window.take(line);
  }
  window.take(partial + decoder.decode());
  return window.result();
}

/** Replaces the one occurrence of `oldText`; none or several is an error naming the count. */
export function replaceExactlyOnce(content: string, oldText: string, newText: string, path: string): string {
  if (oldText === "") throw new ToolInputError("oldText is empty: give the exact text to replace");
  const first = content.indexOf(oldText);
  if (first < 0) throw new ToolInputError(`oldText was not found in ${path}: read the file and copy the text exactly, whitespace included`);
  const second = content.indexOf(oldText, first + 1);
  if (second >= 0) {
    let count = 0;
    for (let at = content.indexOf(oldText); at >= 0; at = content.indexOf(oldText, at + oldText.length)) count++;
    throw new ToolInputError(`oldText occurs ${count} times in ${path}: include more surrounding text so it matches once`);
  }
  return content.slice(0, first) + newText + content.slice(first + oldText.length);
}

function readTool(root: Root): AgentTool {
  return defineTool({
    name: "read",
    description: `Read a text file (or list a directory) inside the working directory. Long files come back in pieces of up to ${READ_MAX_LINES} lines; use offset (1-based line) and limit to read on.`,
    params: {
      path: PATH_PARAM,
      offset: { type: "integer", description: "first line to read, 1-based" },
      limit: { type: "integer", description: "how many lines to read" },
    },
    optional: ["offset", "limit"],
    async run(args, signal) {
      const path = str(args, "path");
      const opened = await openForRead(root(), path);
      try {
        if (opened.stat.isDirectory()) {
          const names = await opened.list();
          return text(names.sort().join("\n") || "(empty directory)", { path, entries: names.length });
        }
        // the size and a binary check come first: a 1.5 GB file must not be read whole to be refused
        const size = opened.stat.size;
        const head = Buffer.alloc(Math.min(8192, size));
        await opened.handle.read(head, 0, head.length, 0);
        if (head.includes(0)) throw new ToolInputError(`${path} is a binary file (${size} bytes)`);
        if (size > READ_WHOLE_MAX_BYTES) {
          const window = await readLineWindow(opened.handle, optInt(args, "offset") ?? 1, optInt(args, "limit"), signal);
          return text(window, { path, bytes: size });
        }
        const data = await readAll(opened.handle, signal);
        return text(sliceForRead(data.toString("utf8"), optInt(args, "offset"), optInt(args, "limit")), { path, bytes: data.length });
      } finally {
        await opened.handle.close();
      }
    },
  });
}

function writeTool(root: Root): AgentTool {
  return defineTool({
    name: "write",
    description: "Create or overwrite a file inside the working directory with the given content. Missing directories are created.",
    params: {
      path: PATH_PARAM,
      content: { type: "string", description: "the complete new content of the file" },
    },
    async run(args) {
      const path = str(args, "path");
      const content = str(args, "content");
      const handle = await openForWrite(root(), path);
      const data = Buffer.from(content, "utf8");
      try {
        await replaceContent(handle, data);
      } finally {
        await handle.close();
      }
      const bytes = data.length;
      return text(`Wrote ${bytes} bytes to ${path}`, { path, bytes });
    },
  });
}

function editTool(root: Root): AgentTool {
  return defineTool({
    name: "edit",
    description:
      "Change a file inside the working directory by replacing one exact piece of text. oldText must match the file exactly (whitespace included) and occur exactly once.",
    params: {
      path: PATH_PARAM,
      oldText: { type: "string", description: "the exact text to replace; it must occur once" },
      newText: { type: "string", description: "the replacement" },
    },
    async run(args, signal) {
      const path = str(args, "path");
      const handle = await openForEdit(root(), path);
      try {
        const current = (await readAll(handle, signal)).toString("utf8");
        const updated = replaceExactlyOnce(current, str(args, "oldText"), str(args, "newText"), path);
        await replaceContent(handle, Buffer.from(updated, "utf8"));
      } finally {
        await handle.close();
      }
      return text(`Edited ${path}`, { path });
    },
  });
}

/** The tail of a command's output, so a noisy build cannot flood the context. */
export function tailOutput(output: string, max = BASH_MAX_OUTPUT): string {
  if (Buffer.byteLength(output) <= max) return output;
  const tail = Buffer.from(output).subarray(-max).toString("utf8");
  return `[output cut: showing the last ${max} bytes]\n${tail}`;
}

function bashTool(cwd: string, root: Root, sandbox: Sandbox): AgentTool {
  return defineTool({
    name: "bash",
    description:
      `Run a bash command, starting in the working directory, and return its output (stdout and stderr together, the last ${BASH_MAX_OUTPUT / 1024} KB). ` +
      `A non-zero exit is an error. Default timeout ${BASH_DEFAULT_TIMEOUT_S} s. ${describeSandbox(sandbox, cwd)}`,
    params: {
      command: { type: "string", description: "the command line, run with bash -c" },
      timeout: { type: "integer", description: "seconds before the command is killed" },
    },
    optional: ["timeout"],
    async run(args, signal) {
      const command = str(args, "command");
      const timeoutS = optInt(args, "timeout") ?? BASH_DEFAULT_TIMEOUT_S;
      const wrap = sandbox.kind === "bubblewrap" ? { file: sandbox.bwrap!, args: bwrapArgv(root(), command, sandbox.network) } : undefined;
      const { output, code, reason } = await runCommand(command, cwd, timeoutS * 1000, signal, wrap);
      const shown = tailOutput(output) || "(no output)";
      if (reason === "timeout") throw new Error(`${shown}\n\nkilled after ${timeoutS} s (timeout)`);
      if (reason === "aborted") throw new Error(`${shown}\n\nkilled: the run was stopped`);
      if (code !== 0) throw new Error(`${shown}\n\nexit code ${code}`);
      return text(shown, { command, exitCode: code });
    },
  });
}

/**
 * Runs `command` in its own process group, so a timeout or abort kills its children too; with
 * `wrap`, `wrap.file wrap.args` is run instead (the sandbox; its args end with the command).
 */
export function runCommand(
  command: string,
  cwd: string,
  timeoutMs: number,
  signal?: AbortSignal,
  wrap?: { file: string; args: string[] },
): Promise<{ output: string; code: number | null; reason?: "timeout" | "aborted" }> {
  return new Promise((resolvePromise, reject) => {
    if (signal?.aborted) {
      resolvePromise({ output: "", code: null, reason: "aborted" });
      return;
    }
    const [file, args] = wrap ? [wrap.file, wrap.args] : ["bash", ["-c", command]];
    const child = spawn(file, args, { cwd, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const chunks: Buffer[] = [];
    let size = 0;
    const collect = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      // Keep memory bounded: only the tail is ever shown.
      while (size > BASH_MAX_OUTPUT * 4 && chunks.length > 1) size -= chunks.shift()!.length;
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    let reason: "timeout" | "aborted" | undefined;
    const kill = (why: "timeout" | "aborted") => {
      reason ??= why;
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    };
    const timer = setTimeout(() => kill("timeout"), timeoutMs);
    const onAbort = () => kill("aborted");
    signal?.addEventListener("abort", onAbort, { once: true });
    child.on("error", (error) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      resolvePromise({ output: Buffer.concat(chunks).toString("utf8"), code, ...(reason ? { reason } : {}) });
    });
  });
}

export interface ChatToolOptions {
  /** include `bash` (off unless the user passed --allow-bash) */
  allowBash?: boolean;
  /** bash's sandbox: "auto" (default) uses bubblewrap when it runs on this machine; "off" never */
  sandbox?: "auto" | "off";
  /** let bash use the network inside the sandbox (default: no network; unsandboxed it always can) */
  allowNetwork?: boolean;
}

/** The tools, and which sandbox bash runs in ("none" also when there is no bash). */
export type ChatTools = AgentTool[] & { sandbox: SandboxKind; sandboxReason: string };

function bashSandbox(cwd: string, options: ChatToolOptions): Sandbox {
  return sandboxFor(cwd, { mode: options.sandbox ?? "auto", network: options.allowNetwork ?? false });
}

/** read, write, edit confined to `cwd`, and bash when allowed (sandboxed where the machine can). */
export function createChatTools(cwd: string, options: ChatToolOptions = {}): ChatTools {
  const dir = resolve(cwd);
  const root = pinnedRoot(dir);
  const tools: AgentTool[] = [readTool(root), writeTool(root), editTool(root)];
  if (!options.allowBash) return Object.assign(tools, { sandbox: "none" as const, sandboxReason: "there is no bash tool" });
  const sandbox = bashSandbox(dir, options);
  tools.push(bashTool(dir, root, sandbox));
  return Object.assign(tools, { sandbox: sandbox.kind, sandboxReason: sandbox.reason });
}

/** Used in the system prompt: which tools exist and where they work. */
export function describeTools(cwd: string, options: ChatToolOptions = {}): string {
  const dir = resolve(cwd);
  if (!options.allowBash) return `You can use the tools read, write, edit. They work inside ${dir} only; give paths relative to it.`;
  return (
    `You can use the tools read, write, edit, bash. read, write and edit work inside ${dir} only; give paths relative to it. ` +
    `bash starts in ${dir}. ${describeSandbox(bashSandbox(dir, options), dir)}`
  );
}

/**
 * The notice for a bash tool that runs outside any sandbox (no bubblewrap here, or it cannot
 * run): shown on screen when the chat starts, as the user asked for the tool believing the
 * docs/chat.md's "sandboxed by bubblewrap". `undefined` when there is no bash tool or it is sandboxed.
 */
export function unsandboxedBashNotice(tools: readonly { name: string }[] & { sandbox: string; sandboxReason: string }): string | undefined {
  if (!tools.some((tool) => tool.name === "bash") || tools.sandbox === "bubblewrap") return undefined;
  return `--allow-bash: no sandbox (${tools.sandboxReason}): the model's bash commands run with your rights, anywhere on this machine`;
}
