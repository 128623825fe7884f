// `npm start`: bonsai's main job on the bundled example session, run from the built package
// (dist/, which `npm install` builds through the prepare script).
//
// It works on a temporary copy, and checks at the end that examples/ is byte-for-byte unchanged.
// It shows what bonsai sees in the session (`bonsai info`, the newest part of `bonsai context`),
// then compacts the copy with the offline extractive summarizer (no model, no network): tokens
// before and after, the cut point and the summary (`bonsai compact`).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const cli = join(root, "dist/cli/main.js");
const example = join(root, "examples/coding-session.jsonl");

if (!existsSync(cli)) {
  console.error("bonsai: dist/cli/main.js is missing; run `npm run build` first (npm install runs it)");
  process.exit(1);
}

const digest = (path) => createHash("sha256").update(readFileSync(path)).digest("hex");
const before = digest(example);
const dir = mkdtempSync(join(tmpdir(), "bonsai-start-"));
const copy = join(dir, "coding-session.jsonl");
copyFileSync(example, copy);

/** Runs one bonsai command on the copy, output straight to the terminal; stops on failure. */
function bonsai(...args) {
  const shown = args.map((a) => (a === copy ? relative(root, example) : a)).join(" ");
  console.log(`\n$ bonsai ${shown}\n`);
  const result = spawnSync(process.execPath, [cli, ...args], { stdio: "inherit" });
  if (result.status !== 0) throw new Error(`bonsai ${args[0]} exited with ${result.status ?? result.signal}`);
}

/** The copy's context as `bonsai info --json` reports it: messages and estimated tokens. */
function contextOf(path) {
  const result = spawnSync(process.execPath, [cli, "info", path, "--json"], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`bonsai info exited with ${result.status ?? result.signal}`);
  return JSON.parse(result.stdout).context;
}

const count = (n) => n.toLocaleString("en-US");
let failed = false;
let outcome;
try {
  console.log(`bonsai on ${relative(root, example)} (working on a temporary copy)`);
  bonsai("info", copy);
  bonsai("context", copy, "--last", "4");
  const before = contextOf(copy);
  bonsai("compact", copy);
  const after = contextOf(copy);
  outcome =
    `the copy's context went from ${count(before.estimatedTokens)} to ${count(after.estimatedTokens)} tokens ` +
    `(${count(before.messages)} → ${count(after.messages)} messages)`;
} catch (error) {
  console.error(`bonsai: ${error.message}`);
  failed = true;
} finally {
  rmSync(dir, { recursive: true, force: true });
}

if (digest(example) !== before) {
  console.error(`bonsai: ${relative(root, example)} changed during the run; it must never be modified`);
  failed = true;
}
// the result last, where the terminal leaves it in view after the summary scrolled past
if (!failed) console.log(`\nDone: compacted with the offline extractive summarizer: ${outcome}; ${relative(root, example)} is unchanged.`);
process.exit(failed ? 1 : 0);
