/**
 * What a database keeps beside a session's lines for `bonsai ls`: the title is the newest name,
 * else the first user message, as files are listed (issue 19, item 12).
 */
import assert from "node:assert/strict";
import { describe, it, mock } from "node:test";
import { applyDigest, backupStamp, digestLines, EMPTY_META, titleFromContent } from "../../src/storage/lines.js";

const header = JSON.stringify({ type: "session", version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" });
const user = (content: unknown) => JSON.stringify({ type: "message", id: "u1", parentId: null, message: { role: "user", content, timestamp: 1 } });

describe("the title of a session in a database", () => {
  it("is the first user message when nothing names the session, also when it comes in a later append", () => {
    const first = applyDigest(EMPTY_META, digestLines([header], true), false);
    assert.equal(first.title, null);
    const later = applyDigest(first, digestLines([user("Fix the\nflaky test"), user("second")], false), false);
    assert.equal(later.title, "Fix the flaky test");
    const named = applyDigest(later, digestLines([JSON.stringify({ type: "session_info", id: "i", parentId: "u1", name: "Named" })], false), false);
    assert.equal(named.title, "Named");
    assert.equal(applyDigest(named, digestLines([user("more")], false), false).title, "Named");
  });

  it("is one line of text without control characters, clipped", () => {
    assert.equal(titleFromContent([{ type: "text", text: "a\u0000b" }, { type: "image" }]), "a b");
    assert.equal(titleFromContent("x".repeat(200))?.length, 80);
    assert.equal(titleFromContent([{ type: "image" }]), undefined);
  });
});

describe("the name of a backup", () => {
  it("is later than every earlier one: within one millisecond, and when the clock steps back", () => {
    // far ahead of the real clock, which other tests in this process may have stamped with
    mock.timers.enable({ apis: ["Date"], now: Date.parse("2090-01-01T10:00:00.005Z") });
    try {
      const stamps = [backupStamp(), backupStamp()];
      mock.timers.setTime(Date.parse("2090-01-01T10:00:00.004Z")); // the clock stepped back
      stamps.push(backupStamp());
      mock.timers.setTime(Date.parse("2090-01-01T10:00:00.006Z"));
      stamps.push(backupStamp());
      assert.deepEqual(stamps, ["2090-01-01T10-00-00-005Z", "2090-01-01T10-00-00-005Z-0001", "2090-01-01T10-00-00-005Z-0002", "2090-01-01T10-00-00-006Z"]);
      assert.deepEqual([...stamps].sort(), stamps, "in order");
    } finally {
      mock.timers.reset();
    }
  });
});
