/** `bonsai chat` input parsing: messages, slash commands with arguments, aliases, hints. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { CHAT_COMMANDS, closestCommand, editDistance, helpLines, parseChatInput } from "../../src/chat/commands.js";

test("plain text is a message, trimmed; blank input is nothing", () => {
  assert.deepEqual(parseChatInput("  fix the bug \n"), { kind: "message", text: "fix the bug" });
  assert.deepEqual(parseChatInput("   \n "), { kind: "empty" });
});

test("commands take their arguments verbatim after the first whitespace", () => {
  assert.deepEqual(parseChatInput("/compact"), { kind: "compact" });
  assert.deepEqual(parseChatInput("/compact   focus on the parser\nand tests"), {
    kind: "compact",
    instructions: "focus on the parser\nand tests",
  });
  assert.deepEqual(parseChatInput("/compact --preview"), { kind: "compact", preview: true });
  assert.deepEqual(parseChatInput("/compact --preview  keep the API notes"), { kind: "compact", instructions: "keep the API notes", preview: true });
  assert.deepEqual(parseChatInput("/compact --previews are words"), { kind: "compact", instructions: "--previews are words" });
  assert.deepEqual(parseChatInput("/label v1 done"), { kind: "label", label: "v1 done" });
  assert.deepEqual(parseChatInput("/label"), { kind: "label" });
  assert.deepEqual(parseChatInput("/tree"), { kind: "tree" });
  assert.deepEqual(parseChatInput("/fork"), { kind: "fork" });
  assert.deepEqual(parseChatInput("/session"), { kind: "session" });
  assert.deepEqual(parseChatInput("/help"), { kind: "help" });
});

test("/quit and its alias /exit, in any case", () => {
  assert.deepEqual(parseChatInput("/quit"), { kind: "quit" });
  assert.deepEqual(parseChatInput("/exit"), { kind: "quit" });
  assert.deepEqual(parseChatInput("/QUIT"), { kind: "quit" });
});

test("paths and // are messages, not commands", () => {
  assert.deepEqual(parseChatInput("/usr/bin/env is missing"), { kind: "message", text: "/usr/bin/env is missing" });
  assert.deepEqual(parseChatInput("//compact means nothing here"), { kind: "message", text: "/compact means nothing here" });
  assert.deepEqual(parseChatInput("/ a slash and a space"), { kind: "message", text: "/ a slash and a space" });
});

test("unknown commands get a hint naming the closest command", () => {
  const typo = parseChatInput("/compcat now");
  assert.equal(typo.kind, "unknown");
  assert.ok(typo.kind === "unknown");
  assert.equal(typo.name, "compcat");
  assert.match(typo.hint, /^unknown command \/compcat: did you mean \/compact\? type \/help/);
  const prefix = parseChatInput("/tr");
  assert.ok(prefix.kind === "unknown" && /did you mean \/tree\?/.test(prefix.hint));
  const far = parseChatInput("/deploy");
  assert.ok(far.kind === "unknown");
  assert.doesNotMatch(far.hint, /did you mean/);
  assert.match(far.hint, /start with \/\/ to send a message beginning with \//);
});

test("closest command: prefixes, small edit distances, aliases resolved", () => {
  assert.equal(closestCommand("sess"), "session");
  assert.equal(closestCommand("lable"), "label");
  assert.equal(closestCommand("exot"), "quit");
  assert.equal(closestCommand("zzzzzz"), undefined);
  assert.equal(editDistance("compact", "compcat"), 1);
  assert.equal(editDistance("", "abc"), 3);
  assert.equal(editDistance("fork", "fork"), 0);
});

test("help lists every command with its arguments, and the keys", () => {
  const lines = helpLines();
  for (const command of CHAT_COMMANDS) assert.ok(lines.some((l) => l.startsWith(`/${command.name}`)), command.name);
  assert.ok(lines.some((l) => l.startsWith("/compact [instructions]")));
  assert.ok(lines.some((l) => l.startsWith("Escape")));
});

test("help wraps long descriptions under the description column, not at column 1 (issue 19, item 10)", () => {
  const lines = helpLines(60);
  for (const line of lines) assert.ok(line.length <= 60, `${line.length}: ${line}`);
  const continued = lines.filter((l) => !l.startsWith("/") && !/^(Escape|Ctrl\+D)/.test(l));
  assert.ok(continued.length > 0, "some description is longer than 36 columns");
  for (const line of continued) assert.match(line, /^ {24}\S/);
  assert.ok(lines.some((l) => l.startsWith("/fork")));
});

test("/pin and /unpin take an optional entry id", () => {
  assert.deepEqual(parseChatInput("/pin"), { kind: "pin", unpin: false });
  assert.deepEqual(parseChatInput("/pin 0bd6"), { kind: "pin", id: "0bd6", unpin: false });
  assert.deepEqual(parseChatInput("/unpin"), { kind: "pin", unpin: true });
});
