/**
 * `bonsai chat --session sqlite:PATH#ID` end to end, in a real terminal (a pseudo-terminal) against the
 * scripted server: the first chat starts the session in the database and exchanges a turn, the
 * second resumes it (transcript and model context), /session and the footer show the location,
 * and /fork continues under a new id in the same database. A database that cannot be opened ends
 * the chat with one line, without the password.
 */
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { listSessionsAt } from "../../src/storage/open.js";
import { chatWorld, lastText } from "../helpers/chat-e2e.js";

test("a chat on sqlite:PATH#ID starts the session there, the next chat on it resumes it, /fork stays in the database; a database that cannot be opened is one line", async () => {
  const world = await chatWorld((request, kind) => {
    if (kind !== "chat") return { text: "## Goal\nunused" };
    const words = lastText(request);
    if (words.includes("which word")) return { text: JSON.stringify(request.messages).includes("heron") ? "It was heron." : "No idea." };
    return { text: "Noted: heron." };
  });
  try {
    writeFileSync(join(world.cwd, "notes.txt"), "not a database\n");
    const notDatabase = world.start(["--session", "sqlite:notes.txt#a"]);
    const unreachable = world.start(["--session", "postgres://ana:s3cret@127.0.0.1:1/db#a"]);
    assert.match(await notDatabase.waitFor("[exited 1]"), /^bonsai: sqlite:\/\S*\/notes\.txt: not a SQLite database\n\[exited 1\]$/m);
    const refused = await unreachable.waitFor("[exited 1]");
    assert.match(refused, /^bonsai: postgres:\/\/ana@127\.0\.0\.1:1\/db: cannot connect to PostgreSQL: .*ECONNREFUSED.*\n\[exited 1\]$/m);
    assert.doesNotMatch(refused, /s3cret/);

    const args = ["--session", "sqlite:chats.db#talk"];
    const chat = world.start(args);
    const footer = await chat.waitFor(/tokens.*chats\.db#talk/);
    assert.match(footer, /· sqlite:\/\S*chats\.db#talk/, "the footer shows the database location");
    chat.submit("remember the word heron");
    await chat.waitFor("Noted: heron.");
    chat.submit("/session");
    const info = await chat.waitFor(/cost:\s+\$0/);
    assert.match(info, /location: sqlite:\/\S*\/chats\.db#talk/);
    assert.match(info, /entries:\s+3 \(1 user, 1 assistant/);
    chat.submit("/quit");
    const exit = await chat.waitFor("[exited 0]");
    assert.match(exit, /Session saved: sqlite:\/\S*\/chats\.db#talk/);
    assert.match(exit, /Resume it with: bonsai chat --session sqlite:\/\S*\/chats\.db#talk/);

    const resumed = world.start(args);
    const first = await resumed.waitFor("Resumed");
    assert.match(first, /Resumed sqlite:\/\S*\/chats\.db#talk \(3 entries\)/);
    assert.match(first, /› remember the word heron/);
    assert.match(first, /Noted: heron\./);
    resumed.submit("which word?");
    await resumed.waitFor("It was heron.");
    resumed.submit("/fork");
    const forked = await resumed.waitFor("stays as it was");
    // the notice wraps at the terminal's width
    assert.match(forked, /Forked: now writing to sqlite:\/\S*\/chats\.db#(?!talk\b)\S+\s+\(sqlite:\/\S*\/chats\.db#talk stays as it was\)/);
    resumed.submit("/quit");
    await resumed.waitFor("[exited 0]");

    const sessions = await listSessionsAt(`sqlite:${join(world.cwd, "chats.db")}`);
    assert.equal(sessions.length, 2, "the fork is a second session in the same database");
    assert.equal(sessions.find((s) => s.id === "talk")?.entryCount, 5, "the model, both turns, nothing from the fork");
    assert.equal(existsSync(join(world.bonsaiDir, "sessions")), false, "no session file was written");
  } finally {
    await world.cleanup();
  }
});
