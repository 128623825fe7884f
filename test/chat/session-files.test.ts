/**
 * Which session `bonsai chat` writes (new, --session FILE or database location, --continue = the
 * newest valid file of the directory), what it prints when it is done, and which model it talks
 * to (options, then environment, else one clear line). A database session also goes through a
 * real turn with the scripted server, then is resumed, as `bonsai chat --session` does.
 */
import assert from "node:assert/strict";
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, afterEach, before, beforeEach, describe, it, test } from "node:test";
import { AgentSession } from "../../src/agent/agent-session.js";
import { chatModelSource, NO_MODEL_MESSAGE, resolveChatModel } from "../../src/chat/model.js";
import { findLatestSession, hasSessionHeader, openChatSession, savedSessionLines, shellWord, withoutPasswords } from "../../src/chat/session-files.js";
import { CliError } from "../../src/cli/output.js";
import { SessionLockedError } from "../../src/storage/lock.js";
import { defaultSessionDir, SessionManager } from "../../src/session/manager.js";
import { listSessionsAt } from "../../src/storage/open.js";
import { testDatabase } from "../helpers/postgres.js";
import { tempDir, userMsg } from "../helpers/session-builders.js";
import { type ChatRequest, type ScriptedServer, startScriptedServer } from "../helpers/sse-server.js";

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

test("a new chat session lives in the session directory of the working directory, written on the first message", async () => {
  const cwd = join(temp.dir, "project");
  const { session, resumed } = await openChatSession({ cwd });
  try {
    assert.equal(resumed, false);
    assert.equal(session.getSessionFile()?.startsWith(defaultSessionDir(cwd)), true);
    assert.ok(defaultSessionDir(cwd).startsWith(join(temp.dir, "bonsai", "sessions", "--")));
    session.appendMessage(userMsg("hi"));
  } finally {
    session.close();
  }
  const again = await openChatSession({ cwd, continue: true });
  try {
    assert.equal(again.resumed, true);
    assert.equal(again.session.getEntries().length, 1);
  } finally {
    again.session.close();
  }
});

test("--continue without any session of the directory, and --session with --continue, fail with one line", async () => {
  await assert.rejects(openChatSession({ cwd: join(temp.dir, "empty"), continue: true }), (error: unknown) => {
    return error instanceof CliError && /^no session to continue in .+: start one with bonsai chat$/.test(error.message);
  });
  await assert.rejects(openChatSession({ cwd: temp.dir, session: "x.jsonl", continue: true }), /cannot be combined/);
  await assert.rejects(openChatSession({ cwd: temp.dir, session: "sqlite:chats.db#a", continue: true }), /cannot be combined/);
});

test("--session opens that file, relative to the working directory, and locks it", async () => {
  const file = join(temp.dir, "mine.jsonl");
  const first = SessionManager.open(file);
  first.appendMessage(userMsg("earlier"));
  first.close();
  const { session, resumed } = await openChatSession({ cwd: temp.dir, session: "mine.jsonl" });
  try {
    assert.equal(resumed, true);
    assert.equal(session.getSessionFile(), file);
    await assert.rejects(openChatSession({ cwd: temp.dir, session: "mine.jsonl" }), /is being written by/);
  } finally {
    session.close();
  }
});

test("sqlite:PATH#ID starts a session under that id (path relative to the working directory), resumes it, and holds its lease", async () => {
  const db = join(temp.dir, "chats.db");
  const first = await openChatSession({ cwd: temp.dir, session: "sqlite:chats.db#talk" });
  try {
    assert.equal(first.resumed, false);
    assert.equal(first.session.getLocation(), `sqlite:${db}#talk`);
    assert.equal(first.session.getSessionFile(), undefined);
    assert.equal(first.session.getHeader()?.id, "talk");
    first.session.appendMessage(userMsg("earlier"));
    await assert.rejects(openChatSession({ cwd: temp.dir, session: `sqlite:${db}#talk` }), (error: unknown) => {
      return error instanceof SessionLockedError && /is being written by process \d+/.test(error.message);
    });
  } finally {
    await first.session.close();
  }
  const again = await openChatSession({ cwd: join(temp.dir, "elsewhere"), session: `sqlite:${db}#talk` });
  try {
    assert.equal(again.resumed, true);
    assert.deepEqual(
      again.session.getEntries().map((e) => e.type),
      ["message"],
    );
  } finally {
    await again.session.close();
  }
  const fresh = await openChatSession({ cwd: temp.dir, session: "sqlite:chats.db" });
  try {
    assert.equal(fresh.resumed, false, "a database without #ID gets a new session");
    const id = fresh.session.getHeader()?.id;
    assert.ok(id && id !== "talk");
    assert.equal(fresh.session.getLocation(), `sqlite:${db}#${encodeURIComponent(id)}`);
  } finally {
    await fresh.session.close();
  }
});

test("a database that cannot be opened, or a location that cannot be read, is one line without the password", async () => {
  writeFileSync(join(temp.dir, "notes.txt"), "not a database\n");
  const cases: [string, RegExp][] = [
    ["sqlite:notes.txt#a", /^sqlite:\/.*notes\.txt: not a SQLite database$/],
    [`sqlite:${temp.dir}#a`, /cannot open the SQLite store/],
    ["postgres://ana:s3cret@127.0.0.1:1/db#a", /^postgres:\/\/ana@127\.0\.0\.1:1\/db: cannot connect to PostgreSQL: /],
    ["postgres://ana:s3cret@127.0.0.1:1/db#", /^--session postgres:\/\/ana@127\.0\.0\.1:1\/db: empty session id/],
    ["sqlite:#a", /^--session sqlite:#a: no database path/],
  ];
  for (const [location, expected] of cases) {
    await assert.rejects(openChatSession({ cwd: temp.dir, session: location }), (error: Error) => {
      assert.match(error.message, expected, location);
      assert.doesNotMatch(error.message, /s3cret|\n/, location);
      return true;
    });
  }
  assert.equal(withoutPasswords("a postgres://u:p@h/d and postgresql://v:q@h:1/e#x"), "a postgres://u@h/d and postgresql://v@h:1/e#x");
});

test("after the chat: where the session is saved and the command that resumes it", () => {
  const cwd = join(temp.dir, "project");
  const inDefault = join(defaultSessionDir(cwd), "2026_x.jsonl");
  assert.deepEqual(savedSessionLines(cwd, { file: inDefault, location: inDefault }), [
    `Session saved: ${inDefault}`,
    "Resume it with: bonsai chat --continue",
  ]);
  const elsewhere = join(temp.dir, "mine.jsonl");
  assert.equal(savedSessionLines(cwd, { file: elsewhere, location: elsewhere })[1], `Resume it with: bonsai chat --session ${elsewhere}`);
  assert.deepEqual(savedSessionLines(cwd, { file: undefined, location: "sqlite:/d/chats.db#talk" }), [
    "Session saved: sqlite:/d/chats.db#talk",
    "Resume it with: bonsai chat --session sqlite:/d/chats.db#talk",
  ]);
  assert.equal(shellWord("postgres://ana@h/db?sslmode=require&x=1#id"), "'postgres://ana@h/db?sslmode=require&x=1#id'");
  assert.equal(shellWord("/it's here.jsonl"), "'/it'\\''s here.jsonl'");
  assert.equal(shellWord("#id"), "'#id'");
});

/** One turn of the chat's agent over the scripted server, as `bonsai chat` builds it. */
async function oneTurn(manager: SessionManager, server: ScriptedServer, text: string): Promise<AgentSession> {
  const { model, apiKey } = await resolveChatModel({ baseUrl: server.baseUrl, modelId: "scripted" }, {});
  const session = await AgentSession.create({ sessionManager: manager, model, systemPrompt: "You are terse.", getApiKey: () => apiKey });
  await session.prompt(text);
  return session;
}

const said = (request: ChatRequest) => JSON.stringify(request.messages);

describe("a chat on a PostgreSQL session", () => {
  let url: string;
  let stop: () => Promise<void>;
  let server: ScriptedServer;
  before(async () => {
    ({ url, stop } = await testDatabase());
    server = await startScriptedServer((request) => ({ text: `answer ${said(request).length}` }));
  });
  after(async () => {
    await server.close();
    await stop();
  });

  it("starts there, exchanges a turn, and the next chat resumes it with the turn in its context; /fork stays in the database", async () => {
    const first = await openChatSession({ cwd: temp.dir, session: `${url}#pg-talk` });
    assert.equal(first.resumed, false);
    assert.equal(first.session.getLocation(), `${url}#pg-talk`);
    await oneTurn(first.session, server, "remember the word heron");
    await assert.rejects(openChatSession({ cwd: temp.dir, session: `${url}#pg-talk` }), SessionLockedError);
    // the writes are queued: only an awaited close() has them committed
    await first.session.close();

    const second = await openChatSession({ cwd: temp.dir, session: `${url}#pg-talk` });
    assert.equal(second.resumed, true);
    const agent = await oneTurn(second.session, server, "which word?");
    assert.match(said(server.requests.at(-1)!), /remember the word heron/, "the resumed context holds the first turn");
    assert.equal(agent.messages.filter((m) => m.role === "user").length, 2);

    const leaf = second.session.getLeafId()!;
    const forked = second.session.createBranchedSession(leaf);
    assert.match(forked ?? "", new RegExp(`^${url.replace(/[.?*+^$()|[\]\\]/g, "\\$&")}#(?!pg-talk$)`));
    second.session.appendMessage(userMsg("only in the fork"));
    await second.session.close();

    const sessions = await listSessionsAt(url);
    assert.equal(sessions.length, 2);
    const original = sessions.find((s) => s.id === "pg-talk")!;
    const fork = sessions.find((s) => s.id !== "pg-talk")!;
    assert.equal(original.entryCount, 4, "two turns, nothing from the fork");
    assert.equal(fork.entryCount, 5, "the path so far and the fork's own message");
  });
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
  // --api: a gateway speaking Anthropic's or OpenAI's Responses API, its key from that provider's variable
  const gateway = await resolveChatModel({ baseUrl: "https://gw.example/anthropic/", modelId: "claude-gw", api: "anthropic-messages" }, { ANTHROPIC_API_KEY: "ak" });
  assert.deepEqual([gateway.model.api, gateway.model.provider, gateway.model.baseUrl, gateway.apiKey], ["anthropic-messages", "anthropic", "https://gw.example/anthropic", "ak"]);
  assert.equal((gateway.model as { compat?: unknown }).compat, undefined);
  const responses = await resolveChatModel({}, { BONSAI_BASE_URL: "https://gw.example/v1", BONSAI_API: "openai-responses", OPENAI_API_KEY: "ok" });
  assert.deepEqual([responses.model.api, responses.model.provider, responses.apiKey], ["openai-responses", "openai", "ok"]);
  await assert.rejects(resolveChatModel({ baseUrl: "http://h/v1", api: "gemini" }, {}), (error: unknown) => error instanceof CliError && /^--api "gemini" is not one of openai-completions, openai-responses, anthropic-messages$/.test(error.message));
});
