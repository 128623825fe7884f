/**
 * A database session named by the start of its id, as `tree` and `ls` show ids shortened
 * (issue 27): `sqlite:db#019cebb8` opens the one session whose id starts so, and several such
 * sessions are one line naming them.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { openSession, sessionIdForPrefix } from "../../src/ops/open-session.js";
import { copySession } from "../../src/storage/copy.js";
import { SessionFileError } from "../../src/storage/load.js";
import { ROOT } from "../helpers/cli.js";

const dir = mkdtempSync(join(tmpdir(), "bonsai-open-prefix-"));
after(() => rmSync(dir, { recursive: true, force: true }));

describe("sessionIdForPrefix", () => {
  const ids = ["019cebb8-90d4-7b94-8aee-67a6b9ef9403", "019cebb8-ffff-7000-8000-000000000000", "7a3f0000-0000-7000-8000-000000000000"];
  it("finds the one id that starts with the prefix, or none", () => {
    assert.equal(sessionIdForPrefix(ids, "7a3f", "db"), ids[2]);
    assert.equal(sessionIdForPrefix(ids, "019cebb8-90", "db"), ids[0]);
    assert.equal(sessionIdForPrefix(ids, "abc", "db"), undefined);
  });
  it("refuses a prefix several ids share, naming them", () => {
    assert.throws(() => sessionIdForPrefix(ids, "019cebb8", "sqlite:db#019cebb8"), {
      message: `sqlite:db#019cebb8: 2 sessions have ids starting with "019cebb8" (${ids[0]}, ${ids[1]}); give more of the id`,
    });
  });
});

describe("openSession with a shortened id", () => {
  it("opens the session of a SQLite store whose id starts with it; a prefix of none is still 'no such session'", async () => {
    const db = join(dir, "s.sqlite");
    const example = join(ROOT, "examples/coding-session.jsonl");
    const id = JSON.parse(readFileSync(example, "utf8").split("\n")[0]).id as string;
    await copySession(example, `sqlite:${db}#${id}`);
    // a second session whose id shares the first four characters only
    const other = readFileSync(example, "utf8").replace(id, `${id.slice(0, 4)}ffff${id.slice(8)}`);
    writeFileSync(join(dir, "other.jsonl"), other);
    await copySession(join(dir, "other.jsonl"), `sqlite:${db}#${id.slice(0, 4)}ffff${id.slice(8)}`);

    const session = await openSession(`sqlite:${db}#${id.slice(0, 8)}`, { readOnly: true });
    try {
      assert.equal(session.getHeader()?.id, id);
      assert.equal(session.getLocation(), `sqlite:${db}#${id}`);
    } finally {
      await session.close();
    }
    await assert.rejects(openSession(`sqlite:${db}#${id.slice(0, 4)}`, { readOnly: true }), /2 sessions have ids starting with/);
    await assert.rejects(openSession(`sqlite:${db}#nope`, { readOnly: true }), (e: unknown) => e instanceof SessionFileError && e.code === "NOT_FOUND");
  });
});
