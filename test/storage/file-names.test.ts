/**
 * File names made from stored data stay in their folder (src/storage/file.ts, fileNamePart): a
 * session id like `x/../../../ESCAPED` in a database used to put `bonsai copy DB#ID DIR/`'s file
 * three folders above DIR.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { SessionManager } from "../../src/session/manager.js";
import { fileNamePart, sessionFileName } from "../../src/storage/file.js";
import { runBonsai } from "../helpers/cli.js";
import { tempDir, userMsg } from "../helpers/session-builders.js";

describe("file names from stored data", () => {
  it("keep letters, digits, dots, dashes and underscores, and nothing that names another folder", () => {
    assert.equal(fileNamePart("0b8a-4c_e.1", 40), "0b8a-4c_e.1");
    assert.equal(fileNamePart("x/../../../ESCAPED", 40), "x_.._.._.._ESCAPED");
    assert.equal(fileNamePart("a\\b\0c d", 40), "a_b_c_d");
    assert.equal(fileNamePart("z".repeat(500), 160).length, 160);
    const name = sessionFileName({ id: "../../x", timestamp: "2026-01-01T00:00:00.000Z/../.." });
    assert.ok(!name.includes("/") && name.endsWith(".jsonl"), name);
  });

  it("bonsai copy from a database session with a hostile id writes inside the target folder", async () => {
    const temp = tempDir();
    after(temp.cleanup);
    const { dir } = temp;
    const db = join(dir, "store.db");
    const target = join(dir, "a", "b", "c", "out");
    mkdirSync(target, { recursive: true });
    const id = "x/../../../ESCAPED";
    const session = await SessionManager.createIn(`sqlite:${db}#${id}`, "/work");
    session.appendMessage(userMsg("hello"));
    await session.close();

    const run = await runBonsai(["copy", `sqlite:${db}#${id}`, `${target}/`]);
    assert.equal(run.code, 0, run.stderr);
    const written = readdirSync(target);
    assert.equal(written.length, 1, `one file in the target: ${written.join(", ")}`);
    assert.match(written[0], /_x_.._.._.._ESCAPED\.jsonl$/);
    assert.equal(existsSync(join(dir, "a", "ESCAPED")), false);
    assert.deepEqual(readdirSync(join(dir, "a")), ["b"], "nothing written above the target");
  });
});
