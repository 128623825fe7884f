/**
 * Commands that only read never create or change anything (src/storage/sqlite-schema.ts,
 * file-list.ts): `bonsai ls` of another program's SQLite database used to switch it to WAL for
 * good before refusing it, a readable but unwritable store could not be read, a failed `label`
 * on a new database left the file behind, and one unreadable folder stopped `ls DIR`.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import Database from "libsql";
import { sqliteValue } from "../../src/storage/sqlite-schema.js";
import { SessionManager } from "../../src/session/manager.js";
import { ROOT, runBonsai } from "../helpers/cli.js";
import { tempDir, userMsg } from "../helpers/session-builders.js";
import { BONSAI_ARGS } from "../helpers/bonsai-bin.js";

const temp = tempDir();
after(() => {
  spawnSync("chmod", ["-R", "u+rwx", temp.dir]);
  temp.cleanup();
});
const digest = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

/** Runs bonsai as an unprivileged user when this process is root (root ignores permissions). */
function bonsaiAsUser(args: string[]) {
  return spawnSync(process.execPath, [...BONSAI_ARGS, ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", BONSAI_DEBUG: "" },
    ...(process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {}),
  });
}

describe("read-only commands change nothing", () => {
  it("ls refuses another program's SQLite database without switching it to WAL or writing to it", async () => {
    const file = join(temp.dir, "foreign.db");
    const db = new Database(file);
    db.exec("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine')");
    db.close();
    const before = digest(file);
    const run = await runBonsai(["ls", `sqlite:${file}`]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /not a bonsai store \(it holds other tables\)/);
    assert.equal(digest(file), before, "the file is byte for byte as it was");
    const check = new Database(file);
    assert.equal(sqliteValue(check.prepare("PRAGMA journal_mode")), "delete");
    check.close();
  });

  it("a bonsai store that is readable but not writable can be listed and read", async () => {
    const dir = join(temp.dir, "shared-store");
    mkdirSync(dir);
    const file = join(dir, "sessions.db");
    const session = await SessionManager.createIn(`sqlite:${file}#s1`, "/work");
    session.appendMessage(userMsg("read me"));
    await session.close();
    chmodSync(temp.dir, 0o755);
    chmodSync(file, 0o444);
    chmodSync(dir, 0o555);
    const ls = bonsaiAsUser(["ls", `sqlite:${file}`, "--json"]);
    assert.equal(ls.status, 0, ls.stderr);
    assert.deepEqual(
      (JSON.parse(ls.stdout) as { id: string }[]).map((s) => s.id),
      ["s1"],
    );
    const context = bonsaiAsUser(["context", `sqlite:${file}#s1`]);
    assert.equal(context.status, 0, context.stderr);
    assert.match(context.stdout, /read me/);
  });

  it("a label on a database that does not exist fails and leaves no database behind", async () => {
    const file = join(temp.dir, "new.db");
    const run = await runBonsai(["label", `sqlite:${file}#nope`, "abcd1234", "x"]);
    assert.equal(run.code, 1);
    assert.equal(existsSync(file), false);
  });

  it("ls DIR skips a folder it cannot read, with a warning, and lists the rest", async () => {
    const root = join(temp.dir, "sessions");
    mkdirSync(join(root, "open"), { recursive: true });
    mkdirSync(join(root, "closed"), { recursive: true });
    copyFileSync(join(ROOT, "examples/coding-session.jsonl"), join(root, "open", "a.jsonl"));
    copyFileSync(join(ROOT, "examples/coding-session.jsonl"), join(root, "closed", "b.jsonl"));
    chmodSync(temp.dir, 0o755);
    chmodSync(join(root, "closed"), 0o000);
    try {
      const run = bonsaiAsUser(["ls", root, "--json"]);
      assert.equal(run.status, 0, run.stderr);
      assert.deepEqual(
        (JSON.parse(run.stdout) as { location: string }[]).map((s) => s.location.split("/").pop()),
        ["a.jsonl"],
      );
      assert.match(run.stderr, /closed: cannot read this folder \(EACCES\); its sessions are not listed/);
    } finally {
      chmodSync(join(root, "closed"), 0o755);
    }
  });
});
