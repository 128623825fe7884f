/**
 * Clear one-line errors and no leftovers (src/storage/load.ts, lock.ts, file-writer.ts): a byte
 * order mark is named instead of showing as an invisible character, a lock that cannot be created
 * is one `bonsai: <file>:` line, and temporary files of a killed rewrite are removed on the next
 * open for writing.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { SessionManager } from "../../src/session/manager.js";
import { ROOT, runBonsai } from "../helpers/cli.js";
import { tempDir, userMsg } from "../helpers/session-builders.js";
import { BONSAI_ARGS } from "../helpers/bonsai-bin.js";

const temp = tempDir();
after(() => {
  chmodSync(temp.dir, 0o755);
  temp.cleanup();
});

describe("clear errors and no leftovers", () => {
  it("a file that starts with a byte order mark is refused by name, with how to remove it", async () => {
    const file = join(temp.dir, "bom.jsonl");
    writeFileSync(file, `\uFEFF${JSON.stringify({ type: "session", version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/" })}\n`);
    const run = await runBonsai(["info", file]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /^bonsai: .*bom\.jsonl:1: starts with a UTF-8 byte order mark \(bytes EF BB BF\)/);
    assert.ok(!run.stderr.includes("\uFEFF"), "no invisible character in the message");
  });

  it("a lock that cannot be created is one line naming the session, not a raw EACCES on the .lock", () => {
    chmodSync(temp.dir, 0o755); // reachable by the unprivileged user below
    const dir = join(temp.dir, "locked-folder");
    mkdirSync(dir);
    const file = join(dir, "s.jsonl");
    copyFileSync(join(ROOT, "examples/coding-session.jsonl"), file);
    // root ignores permissions: run the command as an unprivileged user then, whose file it is
    const root = process.getuid?.() === 0;
    const asUser = root ? { uid: 65534, gid: 65534 } : {};
    if (root) chownSync(file, 65534, 65534);
    chmodSync(dir, 0o555);
    try {
      const run = spawnSync(process.execPath, [...BONSAI_ARGS, "label", file, "00ce59c6", "x"], {
        cwd: ROOT,
        encoding: "utf8",
        env: { ...process.env, NO_COLOR: "1", BONSAI_DEBUG: "", TSX_TSCONFIG_PATH: join(ROOT, "tsconfig.json") },
        ...asUser,
      });
      assert.equal(run.status, 1, run.stderr);
      assert.equal(run.stderr.trim().split("\n").length, 1, run.stderr);
      assert.match(run.stderr, /^bonsai: .*s\.jsonl: cannot take the writer lock s\.jsonl\.lock \(EACCES: no permission to create files in its folder\); open it read-only/);
    } finally {
      chmodSync(dir, 0o755);
    }
  });

  it("temporary files a killed rewrite left beside the session are removed by the next writer", async () => {
    const file = join(temp.dir, "s.jsonl");
    const first = SessionManager.open(file);
    first.appendMessage(userMsg("hello"));
    await first.close();
    const stale = join(temp.dir, ".s.jsonl.0123456789ab.tmp");
    const unrelated = join(temp.dir, ".s.jsonl.notes.tmp");
    writeFileSync(stale, "half a rewrite");
    writeFileSync(unrelated, "someone else's");
    const reader = SessionManager.open(file, { readOnly: true });
    await reader.close();
    assert.ok(existsSync(stale), "a read-only open removes nothing");
    const writer = SessionManager.open(file);
    await writer.close();
    assert.equal(existsSync(stale), false);
    assert.ok(existsSync(unrelated), "only bonsai's own temp names are removed");
  });
});
