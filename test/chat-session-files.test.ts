/**
 * Which session `bonsai chat` writes (new, --session FILE, --continue = the newest valid one of
 * the directory) and which model it talks to (options, then environment, else one clear line).
 */
import assert from "node:assert/strict";
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import { chatModelSource, NO_MODEL_MESSAGE, resolveChatModel } from "../src/chat/model.js";
import { findLatestSession, hasSessionHeader, openChatSession } from "../src/chat/session-files.js";
import { CliError } from "../src/cli/output.js";
import { defaultSessionDir, SessionManager } from "../src/session/manager.js";
import { tempDir, userMsg } from "./helpers/session-builders.js";

let temp: ReturnType<typeof tempDir>;
let savedDir: string | undefined;
beforeEach(() => {
  temp = tempDir();
  savedDir = process.env.BONSAI_DIR;
  process.env.BONSAI_DIR = join(temp.dir, "bonsai");
});
afterEach(() => {
  if (savedDir === undefined) delete process.env.BONSAI_DIR;
  else process.env.BONSAI_DIR = savedDir;
  temp.cleanup();
});

const header = (id: string) => `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" })}\n`;

test("the newest file by modification time with a valid header wins", () => {
  const dir = join(temp.dir, "s");
  mkdirSync(dir);
  const write = (name: string, text: string, mtime: number) => {
    writeFileSync(join(dir, name), text);
    utimesSync(join(dir, name), mtime, mtime);
  };
  write("old.jsonl", header("a"), 1000);
  write("mid.jsonl", header("b"), 2000);
  write("newest-broken.jsonl", "not json\n", 3000);
  write("notes.txt", header("c"), 4000);
  write("empty.jsonl", "", 3500);
  assert.equal(findLatestSession(dir), join(dir, "mid.jsonl"));
  assert.equal(hasSessionHeader(join(dir, "newest-broken.jsonl")), false);
  assert.equal(hasSessionHeader(join(dir, "old.jsonl")), true);
  assert.equal(findLatestSession(join(temp.dir, "missing")), undefined);
});

test("a new chat session lives in the session directory of the working directory, written on the first message", () => {
  const cwd = join(temp.dir, "project");
  const { session, resumed } = openChatSession({ cwd });
  try {
    assert.equal(resumed, false);
    assert.equal(session.getSessionFile()?.startsWith(defaultSessionDir(cwd)), true);
    assert.ok(defaultSessionDir(cwd).startsWith(join(temp.dir, "bonsai", "sessions", "--")));
    session.appendMessage(userMsg("hi"));
  } finally {
    session.close();
  }
  const again = openChatSession({ cwd, continue: true });
  try {
    assert.equal(again.resumed, true);
    assert.equal(again.session.getEntries().length, 1);
  } finally {
    again.session.close();
  }
});

test("--continue without any session of the directory, and --session with --continue, fail with one line", () => {
  assert.throws(() => openChatSession({ cwd: join(temp.dir, "empty"), continue: true }), (error: unknown) => {
    return error instanceof CliError && /^no session to continue in .+: start one with bonsai chat$/.test(error.message);
  });
  assert.throws(() => openChatSession({ cwd: temp.dir, session: "x.jsonl", continue: true }), /cannot be combined/);
});

test("--session opens that file, relative to the working directory, and locks it", () => {
  const file = join(temp.dir, "mine.jsonl");
  const first = SessionManager.open(file);
  first.appendMessage(userMsg("earlier"));
  first.close();
  const { session, resumed } = openChatSession({ cwd: temp.dir, session: "mine.jsonl" });
  try {
    assert.equal(resumed, true);
    assert.equal(session.getSessionFile(), file);
    assert.throws(() => openChatSession({ cwd: temp.dir, session: "mine.jsonl" }), /is being written by/);
  } finally {
    session.close();
  }
});

test("the model comes from --base-url, then --model, then BONSAI_BASE_URL, then BONSAI_MODEL", () => {
  assert.deepEqual(chatModelSource({ baseUrl: "http://h/v1", model: "a/b", modelId: "m" }, {}), {
    kind: "base-url",
    baseUrl: "http://h/v1",
    modelId: "m",
    from: "option",
  });
  assert.deepEqual(chatModelSource({ model: "a/b" }, { BONSAI_BASE_URL: "http://e/v1" }), { kind: "registry", spec: "a/b", from: "option" });
  assert.deepEqual(chatModelSource({}, { BONSAI_BASE_URL: "http://e/v1", BONSAI_MODEL_ID: "q", BONSAI_MODEL: "a/b" }), {
    kind: "base-url",
    baseUrl: "http://e/v1",
    modelId: "q",
    from: "env",
  });
  assert.deepEqual(chatModelSource({}, { BONSAI_MODEL: "a/b" }), { kind: "registry", spec: "a/b", from: "env" });
  assert.equal(chatModelSource({}, {}), undefined);
});

test("model resolution: an OpenAI-compatible server, a bad spec from the environment, and no model at all", async () => {
  const { model, apiKey } = await resolveChatModel({ baseUrl: "http://127.0.0.1:1/v1/", modelId: "qwen", contextWindow: 4096 }, {});
  assert.deepEqual([model.provider, model.id, model.baseUrl, model.contextWindow], ["openai-compatible", "qwen", "http://127.0.0.1:1/v1", 4096]);
  assert.equal(apiKey, "bonsai");
  await assert.rejects(resolveChatModel({}, {}), (error: unknown) => error instanceof CliError && error.message === NO_MODEL_MESSAGE);
  await assert.rejects(resolveChatModel({}, { BONSAI_MODEL: "nonsense" }), /is not provider\/id.*\(from BONSAI_MODEL\)$/);
  await assert.rejects(resolveChatModel({ baseUrl: "ftp://x" }, {}), /must be http or https$/);
});
