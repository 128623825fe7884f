/**
 * Issue 28, item 2: `bonsai compact --edit`. The editor gets everything that will be written (the
 * summary with its file lists); the entry holds exactly what was saved; an editor that exits
 * non-zero cancels, and the file is byte for byte as it was.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { SessionManager } from "../../src/session/manager.js";
import { BONSAI_ARGS } from "../helpers/bonsai-bin.js";
import { ROOT } from "../helpers/cli.js";

const dir = mkdtempSync(join(tmpdir(), "bonsai-edit-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function bonsai(args: string[], editor: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [...BONSAI_ARGS, ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: "1", VISUAL: "", EDITOR: editor } }, (error, stdout, stderr) =>
      done({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

/** An editor script: keeps a copy of what it was given, then replaces the whole text. */
function editor(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\ncp "$1" "${join(dir, `${name}.seen`)}"\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

describe("bonsai compact --edit", () => {
  it("writes exactly what was saved, after showing everything that would be written", async () => {
    const file = join(dir, "s.jsonl");
    copyFileSync(join(ROOT, "examples/coding-session.jsonl"), file);
    const saved = "## Goal\nShip the token bucket; 100 requests per minute per key.\n\n<modified-files>\nsrc/middleware/rate-limit.ts\n</modified-files>";
    const run = await bonsai(["compact", file, "--edit", "-q"], editor("replace", `printf '%s' '${saved}' > "$1"`));
    assert.equal(run.code, 0, run.stderr);
    const seen = readFileSync(join(dir, "replace.seen"), "utf8");
    assert.match(seen, /<modified-files>\n[\s\S]*<\/modified-files>$/, "the editor saw the file lists");
    assert.match(seen, /## User requests \(verbatim, newest first\)/, "and the guard's sections");
    const compaction = SessionManager.open(file, { readOnly: true }).getBranch().findLast((e) => e.type === "compaction");
    assert.equal(compaction?.type === "compaction" ? compaction.summary : undefined, saved);
  });

  it("writes nothing when the editor exits non-zero", async () => {
    const file = join(dir, "c.jsonl");
    copyFileSync(join(ROOT, "examples/coding-session.jsonl"), file);
    const before = readFileSync(file);
    const run = await bonsai(["compact", file, "--edit"], editor("cancel", "exit 1"));
    assert.equal(run.code, 130);
    assert.match(run.stderr, /compaction cancelled: .*c\.jsonl is unchanged/);
    assert.deepEqual(readFileSync(file), before);
  });
});
