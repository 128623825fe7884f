/**
 * `bonsai chat` lives in the same program as the inspection commands, which must stay fast: they
 * never load pi-tui, pi-ai or pi-agent-core. A module hook records every module resolved.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { BONSAI_ARGS } from "../helpers/bonsai-bin.js";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../..");
const MAIN = join(ROOT, "src/cli/main.ts");

/** Runs the CLI with a resolve hook that appends every specifier to a file; returns them. */
async function resolvedModules(args: string[]): Promise<string[]> {
  const log = join(tmpdir(), `bonsai-resolved-${process.pid}-${Date.now()}.txt`);
  const hooks = `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) { appendFileSync(${JSON.stringify(log)}, specifier + "\\n"); return next(specifier, context); }`;
  const register = `import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
  try {
    await run(process.execPath, ["--import", `data:text/javascript,${encodeURIComponent(register)}`, "--import", "tsx", MAIN, ...args], {
      cwd: ROOT,
    });
    return readFileSync(log, "utf8").split("\n").filter(Boolean);
  } finally {
    rmSync(log, { force: true });
  }
}

test("inspection commands and chat --help load neither pi-tui nor the model libraries", async () => {
  for (const args of [["info", "examples/coding-session.jsonl"], ["tree", "examples/coding-session.jsonl"], ["chat", "--help"]]) {
    const modules = await resolvedModules(args);
    assert.ok(modules.some((m) => /\/chat\.[jt]s$/.test(m)), `the hook saw the chat command module (${args.join(" ")})`);
    const heavy = modules.filter((m) => /@mariozechner\/pi-(tui|ai|agent-core)|chat\/app\.[jt]s|agent-session\.[jt]s/.test(m));
    assert.deepEqual(heavy, [], `bonsai ${args.join(" ")} loaded ${heavy.join(", ")}`);
  }
});

test("chat --help says --session takes a file or a database location, and --continue finds files only", async () => {
  const { stdout } = await run(process.execPath, [...BONSAI_ARGS, "chat", "--help"], { cwd: ROOT });
  const help = stdout.replace(/\s+/g, " ");
  assert.match(help, /--session <location> open this session: a file, sqlite:PATH#ID or postgres:\/\/…#ID \(a new session starts there when it does not exist/);
  assert.match(help, /-c, --continue resume the most recent session file of this directory/);
});
