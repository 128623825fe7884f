/**
 * pi-bonsai in the real pi: pi 0.73.1 (the devDependency) loads packages/pi-bonsai from its
 * settings as it loads an installed package, talks to the scripted OpenAI-compatible server, and
 * bonsai answers its compaction and /tree hooks and prunes its requests. After each scenario pi and
 * bonsai both reopen the session file and must agree on the context.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { SessionManager } from "../../src/session/manager.js";
import { type PiAgent, pi as piPackage, startPiAgent } from "../helpers/pi-agent.js";
import { PI_BONSAI_DIR, buildPiBonsai } from "../helpers/pi-bonsai-build.js";
import { type ChatRequest, type ScriptedReply, type ScriptedServer, startScriptedServer, systemText } from "../helpers/sse-server.js";

/** A summarizer's request (pi's own prompt, or bonsai's), not the agent's (which offers tools, and may name "summarized"). */
const isSummaryRequest = (request: ChatRequest) => !request.tools && /summar|condense recorded conversations/i.test(systemText(request));

/** ~`tokens` estimated tokens of distinct text. */
const filler = (label: string, tokens: number) => Array.from({ length: Math.ceil(tokens / 10) }, (_, i) => `${label} line ${i} of notes`).join("\n");

/** The entries of a session file, parsed. */
const fileEntries = (file: string) =>
  readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));

/** Resolves with the first compaction_end pi emits from now on. */
function nextCompactionEnd(pi: PiAgent): Promise<{ reason: string; result: unknown; errorMessage?: string }> {
  return new Promise((resolve) => {
    const stop = pi.session.subscribe((event) => {
      if (event.type !== "compaction_end") return;
      stop();
      resolve(event);
    });
  });
}

/** pi's and bonsai's contexts of the same file, as role + text, must be the same. */
function assertContextsAgree(file: string): void {
  const pi = piPackage.SessionManager.open(file).buildSessionContext();
  const bonsai = SessionManager.open(file, { readOnly: true });
  try {
    const ours = bonsai.buildSessionContext();
    assert.equal(ours.messages.length, pi.messages.length, "both build as many messages");
    assert.deepEqual(JSON.parse(JSON.stringify(ours.messages)), JSON.parse(JSON.stringify(pi.messages)));
  } finally {
    bonsai.close();
  }
}

describe("pi-bonsai in pi", () => {
  let server: ScriptedServer;
  let reply: (request: ChatRequest, index: number) => ScriptedReply = () => ({ text: "ok" });
  const roots: string[] = [];
  const agents: PiAgent[] = [];

  before(async () => {
    buildPiBonsai();
    server = await startScriptedServer((request, index) => reply(request, index));
  });
  after(async () => {
    for (const agent of agents) agent.dispose();
    await server.close();
    for (const root of roots) rmSync(root, { recursive: true, force: true });
  });

  async function agent(options: Partial<Parameters<typeof startPiAgent>[0]> = {}): Promise<PiAgent> {
    const root = mkdtempSync(join(tmpdir(), "pi-bonsai-"));
    roots.push(root);
    const started = await startPiAgent({ root, baseUrl: server.baseUrl, packageDir: PI_BONSAI_DIR, ...options });
    agents.push(started);
    return started;
  }

  it("a manual /compact is made by bonsai, with the user's words verbatim", async () => {
    reply = (request) => (isSummaryRequest(request) ? { text: "## Goal\nRename parseConfig.\n" } : { text: `done: ${filler("answer", 700)}` });
    const pi = await agent();
    await pi.session.prompt("Rename parseConfig to loadConfig in src/config.ts; never touch the tests.");
    await pi.session.prompt("Now the docs. The staging key is sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123 for the examples.");
    await pi.session.prompt("And the changelog, please.");
    await pi.session.prompt("Then run the linter.");
    const sent = server.requests.length;
    const result = await pi.session.compact();
    assert.match(result.summary, /Rename parseConfig to loadConfig in src\/config\.ts; never touch the tests\./);
    const summaryRequests = server.requests.slice(sent).filter(isSummaryRequest);
    assert.ok(summaryRequests.length > 0, "the summary came from the model");
    for (const request of summaryRequests) {
      assert.doesNotMatch(JSON.stringify(request.messages), /sk-ant-api03/, "a key in the conversation is redacted before it leaves");
    }
    const compaction = fileEntries(pi.sessionFile).find((line) => line.type === "compaction");
    assert.ok(compaction, "a compaction entry was written");
    assert.equal(compaction.details.method, "model");
    assert.equal(compaction.fromHook, true);
    assertContextsAgree(pi.sessionFile);

    // /bonsai reports it (without a UI the report goes to stdout)
    const printed: string[] = [];
    const log = console.log;
    console.log = (...args: unknown[]) => void printed.push(args.join(" "));
    try {
      await pi.session.prompt("/bonsai");
    } finally {
      console.log = log;
    }
    const report = printed.join("\n");
    assert.match(report, /^context: .* of the 8,000-token window; compaction at 7,000/m);
    assert.match(report, new RegExp(`^last compaction: model in [\\d.]+ s, [\\d,]+ tokens before, kept from ${compaction.firstKeptEntryId}`, "m"));
  });

  it("compaction.model in bonsai's settings summarizes instead of pi's current model", async () => {
    reply = (request) => (isSummaryRequest(request) ? { text: `## Goal\nSummarized by ${request.model}.\n` } : { text: `done: ${filler("answer", 700)}` });
    const pi = await agent({ cheapModel: true, bonsaiSettings: { compaction: { model: "cheap/mini" } } });
    for (const text of ["Write the migration for the users table.", "Add the index.", "Now the rollback.", "Then the seed data."]) await pi.session.prompt(text);
    const sent = server.requests.length;
    const result = await pi.session.compact();
    const models = server.requests.slice(sent).filter(isSummaryRequest).map((request) => request.model);
    assert.ok(models.length > 0);
    assert.deepEqual([...new Set(models)], ["mini"]);
    assert.match(result.summary, /Summarized by mini\./);
    assertContextsAgree(pi.sessionFile);
  });

  it("an automatic threshold compaction goes through bonsai", async () => {
    // the third answer reports a prompt of 3,500 tokens: past the 4,000-token window's threshold (4,000 - 1,000)
    let answers = 0;
    reply = (request) => {
      if (isSummaryRequest(request)) return { text: "## Goal\nShip the release.\n" };
      answers++;
      return { text: `step: ${filler("answer", 700)}`, promptTokens: answers >= 3 ? 3500 : 1200 };
    };
    const pi = await agent({ contextWindow: 4000 });
    await pi.session.prompt("Prepare the release notes; always keep the headings.");
    await pi.session.prompt("Now bump the version.");
    const ended = nextCompactionEnd(pi);
    await pi.session.prompt("Then tag it.");
    const end = await ended;
    assert.equal(end.reason, "threshold");
    const compaction = fileEntries(pi.sessionFile).find((line) => line.type === "compaction");
    assert.ok(compaction, "the threshold compaction was written");
    assert.equal(compaction.details.method, "model");
    assert.match(compaction.summary, /Prepare the release notes; always keep the headings\./);
    assertContextsAgree(pi.sessionFile);
  });

  it("an overflow is recovered: bonsai compacts and pi retries the request", async () => {
    let overflowed = false;
    reply = (request) => {
      if (isSummaryRequest(request)) return { text: "## Goal\nFix the flaky test.\n" };
      const last = JSON.stringify(request.messages.at(-1));
      if (!overflowed && last.includes("run it again")) {
        overflowed = true;
        return { status: 400, message: "This model's maximum context length is 8000 tokens. However, your messages resulted in 9120 tokens. Please reduce the length of the messages." };
      }
      return { text: `ran: ${filler("output", 700)}` };
    };
    const pi = await agent();
    await pi.session.prompt("Fix the flaky test in test/net.test.ts; don't add sleeps.");
    await pi.session.prompt("Look at the retry logic.");
    await pi.session.prompt("Check the timeouts.");
    const ended = nextCompactionEnd(pi);
    await pi.session.prompt("Now run it again.");
    const end = await ended;
    assert.equal(end.reason, "overflow");
    // pi retries the request after the compaction, on its own schedule
    const answered = (line: { type: string; message?: { role: string; content: unknown } }) =>
      line.type === "message" && line.message?.role === "assistant" && JSON.stringify(line.message.content).includes("ran: output");
    for (let wait = 0; wait < 100 && !answered(fileEntries(pi.sessionFile).at(-1)); wait++) await new Promise((r) => setTimeout(r, 100));
    const entries = fileEntries(pi.sessionFile);
    const compaction = entries.find((line) => line.type === "compaction");
    assert.ok(compaction, "the overflow compaction was written");
    assert.equal(compaction.details.method, "model");
    const last = entries.filter((line) => line.type === "message").at(-1);
    assert.equal(last.message.role, "assistant");
    assert.match(JSON.stringify(last.message.content), /ran: output line 0/, "the retried request was answered");
    assertContextsAgree(pi.sessionFile);
  });

  it("a failing summarizing model is rescued by the extractive summary", async () => {
    reply = (request) =>
      isSummaryRequest(request) ? { status: 500, message: "the summarizer is down" } : { text: `ok: ${filler("answer", 700)}` };
    const pi = await agent();
    await pi.session.prompt("Port the parser to TypeScript; keep the public names.");
    await pi.session.prompt("Add types for the tokens.");
    await pi.session.prompt("Now the error messages.");
    await pi.session.prompt("Then the docs.");
    // without a UI the notice goes to stderr; it names why the model failed
    const printed: string[] = [];
    const error = console.error;
    console.error = (...args: unknown[]) => void printed.push(args.join(" "));
    let result: Awaited<ReturnType<typeof pi.session.compact>>;
    try {
      result = await pi.session.compact();
    } finally {
      console.error = error;
    }
    assert.match(printed.join("\n"), /^bonsai: compacted with the extractive summary \(.*failed: .*the summarizer is down/m);
    assert.match(result.summary, /extractive summary/);
    assert.match(result.summary, /Port the parser to TypeScript; keep the public names\./);
    const compaction = fileEntries(pi.sessionFile).find((line) => line.type === "compaction");
    assert.equal(compaction.details.method, "extractive");
    assertContextsAgree(pi.sessionFile);
  });

  it("/tree with a summary: bonsai summarizes the branch that is left", async () => {
    reply = (request) => (isSummaryRequest(request) ? { text: "The user tried a recursive descent parser and dropped it." } : { text: "fine" });
    const pi = await agent();
    await pi.session.prompt("Start the parser.");
    const forkPoint = pi.session.sessionManager.getLeafId() as string;
    await pi.session.prompt("Try a recursive descent parser in src/parse.ts.");
    await pi.session.prompt("Add error recovery.");
    const moved = await pi.session.navigateTree(forkPoint, { summarize: true });
    assert.equal(moved.cancelled, false);
    const summary = fileEntries(pi.sessionFile).find((line) => line.type === "branch_summary");
    assert.ok(summary, "a branch summary was written");
    assert.equal(summary.details.method, "model");
    assert.match(summary.summary, /recursive descent parser and dropped it/);
    assertContextsAgree(pi.sessionFile);
  });

  it("requests are pruned, the file keeps every original byte", async () => {
    const big = filler("source", 3000);
    let turn = 0;
    reply = (request) => {
      if (isSummaryRequest(request)) return { text: "summary" };
      turn++;
      // read the same file twice, then answer
      if (turn <= 2) return { text: "", toolCalls: [{ id: `call_${turn}`, name: "read", arguments: { path: "big.txt" } }] };
      return { text: "read it twice" };
    };
    const pi = await agent({ tools: ["read"], bonsaiSettings: { pruning: { maxResultTokens: 500 } } });
    writeFileSync(join(pi.cwd, "big.txt"), big);
    await pi.session.prompt("Read big.txt, then read it again.");
    const requests = server.requests.slice(-3);
    const sizes = requests.map((request) => JSON.stringify(request.messages).length);
    const lastRequest = JSON.stringify(requests.at(-1)?.messages);
    assert.match(lastRequest, /\[Superseded: big\.txt was read again later \(entry [0-9a-f]+\)/);
    assert.match(lastRequest, /cut from the middle of this output; the whole output is in the session file/);
    assert.ok(sizes[2] < big.length, `the request with both reads (${sizes[2]} chars) is smaller than one copy of the file (${big.length})`);
    const results = fileEntries(pi.sessionFile).filter((line) => line.type === "message" && line.message.role === "toolResult");
    assert.equal(results.length, 2);
    for (const result of results) assert.equal(result.message.content[0].text.includes(big.slice(-200)), true, "the file holds the whole output");
    const edits = fileEntries(pi.sessionFile).filter((line) => line.type === "context_edit");
    if ("ModelRuntime" in piPackage) {
      // pi 1.x keeps the pruning: context edits appended at the turn's end, the results untouched
      assert.ok(edits.length > 0, "the pruning was appended as context edits");
      assert.ok(edits.every((e) => results.some((r) => r.id === e.targetId)), "each edit targets a tool result");
      assert.match(JSON.stringify(edits), /Superseded: big\.txt was read again later|cut from the middle/);
      const reopened = JSON.stringify(piPackage.SessionManager.open(pi.sessionFile).buildSessionContext().messages);
      assert.ok(reopened.length < 2 * big.length, "pi reopens the session with the pruning in place");
    } else {
      // pi 0.x has no context edits: only each request is pruned, the file holds no notice
      assert.equal(edits.length, 0);
      assert.doesNotMatch(readFileSync(pi.sessionFile, "utf8"), /Superseded|cut from the middle/);
    }
    assertContextsAgree(pi.sessionFile);
  });

  it("file lists are carried across two of its own compactions (pi marks them fromHook)", async () => {
    let turn = 0;
    reply = (request) => {
      if (isSummaryRequest(request)) return { text: "## Goal\nKeep going.\n" };
      turn++;
      if (turn === 1) return { text: "", toolCalls: [{ id: "call_a", name: "read", arguments: { path: "a.txt" } }] };
      return { text: `done: ${filler("answer", 700)}` };
    };
    const pi = await agent({ tools: ["read"] });
    writeFileSync(join(pi.cwd, "a.txt"), "alpha");
    await pi.session.prompt("Read a.txt.");
    await pi.session.prompt("Second step.");
    await pi.session.prompt("Third step.");
    await pi.session.compact();
    for (const step of ["Fourth step.", "Fifth step.", "Sixth step."]) await pi.session.prompt(step);
    await pi.session.compact();
    const compactions = fileEntries(pi.sessionFile).filter((line) => line.type === "compaction");
    assert.equal(compactions.length, 2);
    assert.equal(compactions[1].fromHook, true);
    assert.deepEqual(pi.extensionErrors, []);
    for (const c of compactions) assert.ok(c.details.readFiles.some((f: string) => f.endsWith("a.txt")), `a.txt is listed: ${JSON.stringify(c.details)}`);
  });

  it("/pin: a pinned request survives five compactions verbatim, and pi reads it from the file", async () => {
    const pinned = "Every public function keeps its JSDoc; the budget for this refactor is 14 files.";
    reply = (request) => (isSummaryRequest(request) ? { text: "## Goal\nKeep refactoring.\n" } : { text: `done: ${filler("answer", 700)}` });
    const pi = await agent();
    await pi.session.prompt(pinned);
    await pi.session.prompt("/pin");
    const pins = fileEntries(pi.sessionFile).filter((line) => line.type === "custom" && line.customType === "bonsai.pin");
    assert.equal(pins.length, 1, "one pin entry, appended through pi");
    for (let round = 1; round <= 5; round++) {
      for (const step of [`Step ${round}a.`, `Step ${round}b.`, `Step ${round}c.`]) await pi.session.prompt(step);
      const result = await pi.session.compact();
      const section = result.summary.slice(result.summary.indexOf("## Pinned (verbatim)"));
      assert.ok(section.includes(pinned), `compaction ${round} carries the pinned request verbatim:\n${result.summary}`);
    }
    assert.equal(fileEntries(pi.sessionFile).filter((line) => line.type === "compaction").length, 5);
    // pi itself, reopening the file, sends the pinned words to the model
    const context = JSON.stringify(piPackage.SessionManager.open(pi.sessionFile).buildSessionContext().messages);
    assert.ok(context.includes(pinned), "pi's own context of the file holds the pinned request");
    assertContextsAgree(pi.sessionFile);
    assert.deepEqual(pi.extensionErrors, []);
  });

  it("the agent answers from before the latest compaction with history_search, then history_read", async () => {
    const lastRole = (request: ChatRequest) => request.messages.at(-1)?.role;
    const lastText = (request: ChatRequest) => JSON.stringify(request.messages.at(-1)?.content ?? "");
    const calls: string[] = [];
    let offered: string[] = [];
    reply = (request) => {
      if (isSummaryRequest(request)) return { text: "## Goal\nFinish the deployment checklist.\n" };
      const question = JSON.stringify(request.messages).includes("Which port did the staging database move to?");
      if (!question) return { text: `Noted. The staging database moved to port 6543 after the migration. ${filler("answer", 700)}` };
      if (lastRole(request) === "user") {
        offered = ((request.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
        calls.push("history_search");
        return { text: "", toolCalls: [{ id: "call_search", name: "history_search", arguments: { query: "staging database port" } }] };
      }
      if (calls.length === 1) {
        const id = /([0-9a-f]{8}) assistant/.exec(lastText(request))?.[1];
        calls.push(`history_read ${id}`);
        return { text: "", toolCalls: [{ id: "call_read", name: "history_read", arguments: { ids: [id] } }] };
      }
      const port = /port (\d+)/.exec(lastText(request))?.[1];
      return { text: `The staging database is on port ${port ?? "unknown"}.` };
    };
    const pi = await agent({ tools: ["history_search", "history_read"] });
    await pi.session.prompt("Where is the staging database now?");
    for (const step of ["Next, the cache.", "Then the queue.", "And the logs."]) await pi.session.prompt(step);
    const result = await pi.session.compact();
    assert.doesNotMatch(result.summary, /6543/, "the summary dropped the detail");
    assert.match(result.summary, /history_search/, "the summary tells the agent it can look back");
    await pi.session.prompt("Which port did the staging database move to?");
    assert.equal(calls[0], "history_search");
    assert.match(calls[1] ?? "", /^history_read [0-9a-f]{8}$/);
    const answer = pi.session.messages.at(-1) as { role: string; content: { type: string; text?: string }[] };
    assert.equal(answer.role, "assistant");
    assert.match(answer.content.map((c) => c.text ?? "").join(""), /port 6543/);
    assert.deepEqual(offered.sort(), ["history_read", "history_search"], "pi offers the model both tools");
    assert.deepEqual(pi.extensionErrors, []);
  });
});
