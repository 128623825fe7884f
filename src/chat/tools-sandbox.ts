/**
 * Where the chat's `bash` tool runs (docs/ARCHITECTURE.md, layer 10: `chat/` tools confined to a
 * directory). A shell command cannot be confined by checking paths the way read, write and edit
 * are: it can name any file. So when the machine offers a sandbox, bubblewrap (`bwrap` on PATH,
 * Linux), the command runs in it: the working directory read-write, the rest of the filesystem
 * read-only, a private /tmp, fresh /dev and /proc, no network unless allowed, no capabilities,
 * and killed when bonsai goes. Whether bwrap can run is found out once by running it (it needs user namespaces,
 * or root with CAP_SYS_ADMIN; containers often forbid both); when it cannot, or is not there, the
 * command runs unconfined with the user's rights, and the tool's description says so.
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants, realpathSync } from "node:fs";
import { delimiter, join } from "node:path";

export type SandboxKind = "bubblewrap" | "none";

export interface Sandbox {
  kind: SandboxKind;
  /** why this kind: what was found, or why bwrap could not be used */
  reason: string;
  /** the bwrap executable (kind "bubblewrap" only) */
  bwrap?: string;
  /** whether the sandboxed command may use the network */
  network: boolean;
}

export interface SandboxOptions {
  /** "auto" (default): bubblewrap when it runs here; "off": never */
  mode?: "auto" | "off";
  /** let a sandboxed command use the network (default: no network) */
  network?: boolean;
  /** where to look for bwrap (default: process.env) */
  env?: NodeJS.ProcessEnv;
}

/** bwrap's arguments up to the command: `root` (a real path) read-write, everything else read-only. */
export function bwrapPrefix(root: string, network: boolean): string[] {
  return [
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
    // The host's daemons listen on Unix sockets under /run (/var/run links there): the user's
    // D-Bus, docker.sock, agent sockets. A command that reaches one has it act outside the
    // sandbox, read-only files or not, so the sandbox's /run is its own and empty.
    "--tmpfs",
    "/run",
    // After /tmp and /run: a working directory below either is bound over the private one.
    "--bind",
    root,
    root,
    "--chdir",
    root,
    "--unshare-all",
    ...(network ? ["--share-net"] : []),
    "--die-with-parent",
    // A new session: the command cannot push input into bonsai's terminal (TIOCSTI).
    "--new-session",
    // Run by root, bwrap leaves the command every capability in its user namespace, and the
    // read-only binds it made there are not locked: `mount -o remount,bind,rw /` then made the
    // real / writable (seen in a root container). Without capabilities, mounting is refused.
    "--cap-drop",
    "ALL",
    "--",
  ];
}

/** The full argv after `bwrap` for running `command` with bash in the sandbox. */
export function bwrapArgv(root: string, command: string, network = false): string[] {
  return [...bwrapPrefix(root, network), "bash", "-c", command];
}

/** An executable `name` in the PATH of `env`, or undefined. */
export function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * Which sandbox `bash` gets in `cwd`, found by running the very arguments it would get with
 * `true` (bwrap with user namespaces off, or mount or /proc forbidden, fails there), not cached.
 */
export function detectSandbox(cwd: string, options: SandboxOptions = {}): Sandbox {
  const network = options.network ?? false;
  if (options.mode === "off") return { kind: "none", reason: "the sandbox was turned off", network: true };
  if (process.platform !== "linux") return { kind: "none", reason: "bubblewrap needs Linux", network: true };
  const bwrap = findOnPath("bwrap", options.env);
  if (!bwrap) return { kind: "none", reason: "bubblewrap (bwrap) is not installed", network: true };
  let root: string;
  try {
    root = realpathSync(cwd);
  } catch {
    return { kind: "none", reason: `the working directory ${cwd} cannot be resolved`, network: true };
  }
  const probe = spawnSync(bwrap, [...bwrapPrefix(root, network), "true"], {
    cwd: root,
    env: options.env ?? process.env,
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 10_000,
    encoding: "utf8",
  });
  if (probe.error) return { kind: "none", reason: `bwrap cannot run here: ${probe.error.message}`, network: true };
  if (probe.status !== 0) {
    const said = probe.stderr.trim().split("\n").slice(-1)[0] || (probe.signal ? `killed by ${probe.signal}` : `exit code ${probe.status}`);
    return { kind: "none", reason: `bwrap cannot run here: ${said}`, network: true };
  }
  return { kind: "bubblewrap", reason: `bubblewrap (${bwrap})`, bwrap, network };
}

const found = new Map<string, Sandbox>();

/** detectSandbox, once per directory and options in a process (createChatTools and describeTools ask both). */
export function sandboxFor(cwd: string, options: SandboxOptions = {}): Sandbox {
  const key = JSON.stringify([cwd, options.mode ?? "auto", options.network ?? false, options.env?.PATH ?? process.env.PATH]);
  let sandbox = found.get(key);
  if (!sandbox) {
    sandbox = detectSandbox(cwd, options);
    found.set(key, sandbox);
  }
  return sandbox;
}

/** One sentence for the model (and the tool description): what the command can and cannot reach. */
export function describeSandbox(sandbox: Sandbox, root: string): string {
  if (sandbox.kind === "bubblewrap") {
    return (
      `Commands run in a bubblewrap sandbox: ${root} is writable, the rest of the filesystem is read-only, ` +
      `/tmp is private and starts empty, and there is ${sandbox.network ? "network access" : "no network"}.`
    );
  }
  return (
    `Commands are NOT sandboxed (${sandbox.reason}): they run with the user's rights and can read and change ` +
    `anything the user can, anywhere; only their starting directory is ${root}.`
  );
}
