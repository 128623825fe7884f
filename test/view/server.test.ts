/** `bonsai view`'s server: the live page, bodies and search on request, changes pushed, read-only. */
import assert from "node:assert/strict";
import { copyFileSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { get, request } from "node:http";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { pruneToolOutput } from "../../src/ops/prune-report.js";
import { SessionManager } from "../../src/session/manager.js";
import type { ViewModel } from "../../src/view/model.js";
import { startViewServer } from "../../src/view/server.js";
import { runBonsai } from "../helpers/cli.js";
import { assistantMsg, tempDir, userMsg } from "../helpers/session-builders.js";
import { compactedExample, EXAMPLE } from "../helpers/view-sessions.js";

const { dir, cleanup } = tempDir();
after(cleanup);

async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url);
  assert.equal(response.status, 200, url);
  return (await response.json()) as T;
}

/** Resolves with the first server-sent event named `name` on `url`. */
function nextEvent(url: string, name: string): { event: Promise<string>; ready: Promise<void>; close: () => void } {
  let close = () => {};
  let ready = () => {};
  const readyP = new Promise<void>((r) => {
    ready = r;
  });
  const event = new Promise<string>((resolve, reject) => {
    const req = get(url, (response) => {
      let buffer = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        buffer += chunk;
        if (buffer.includes("event: hello")) ready();
        const match = new RegExp(`event: ${name}\\ndata: (.*)\\n\\n`).exec(buffer);
        if (match) {
          resolve(match[1]);
          req.destroy();
        }
      });
    });
    req.on("error", (error) => (error.message.includes("socket hang up") ? undefined : reject(error)));
    close = () => req.destroy();
  });
  return { event, ready: readyP, close };
}

function status(url: string, method: string, host?: string): Promise<number> {
  return new Promise((done, fail) => {
    const req = request(url, { method, headers: host ? { host } : {} }, (response) => {
      response.resume();
      done(response.statusCode ?? 0);
    });
    req.on("error", fail);
    req.end();
  });
}

describe("view server", () => {
  it("serves the live page, the model, bodies and search, and refuses writes and other hosts", async () => {
    const { file, compactionId } = await compactedExample(dir);
    const server = await startViewServer(file, { contextWindow: 200_000 });
    try {
      const page = await fetch(server.url);
      // no other site may frame the page: its own policy is a meta tag, which cannot say so
      assert.equal(page.headers.get("x-frame-options"), "DENY");
      assert.match(page.headers.get("content-security-policy") ?? "", /frame-ancestors 'none'/);
      const html = await page.text();
      assert.match(html, /data-mode="live"/);
      assert.doesNotMatch(html, /id="bonsai-data"/, "the live page asks for its model");
      const model = await getJson<ViewModel>(`${server.url}api/model`);
      assert.equal(model.bodies, undefined);
      assert.ok(model.nodes.some((n) => n.id === compactionId));
      const pruned = model.nodes.find((n) => n.flags.pruned)!;
      const { bodies } = await getJson<{ bodies: Record<string, { kind: string; original?: unknown[] }[]> }>(`${server.url}api/bodies?ids=${pruned.id}&ids=${compactionId}&ids=unknown`);
      assert.deepEqual(Object.keys(bodies).sort(), [compactionId, pruned.id].sort());
      assert.equal(bodies[pruned.id][0].kind, "pruned");
      assert.ok(bodies[pruned.id][0].original?.length, "the archived original comes along");
      const { ids } = await getJson<{ ids: string[] }>(`${server.url}api/search?q=PENTEST`);
      assert.ok(ids.length >= 2, "search ignores case and reads bodies");
      assert.equal(await status(server.url, "POST"), 405);
      assert.equal(await status(`${server.url}api/model`, "GET", "attacker.example:80"), 403);
      assert.equal(await status(`${server.url}nothing`, "GET"), 404);
    } finally {
      await server.close();
    }
  });

  it("takes no lock, writes nothing, and sends a change when a writer appends to the file", async () => {
    const { file } = await compactedExample(dir);
    const before = readFileSync(file);
    const server = await startViewServer(file, { contextWindow: 200_000 });
    const events = nextEvent(`${server.url}api/events`, "change");
    try {
      await events.ready;
      await server.refresh();
      assert.deepEqual(readFileSync(file), before, "viewing changes no byte");
      const writer = SessionManager.open(file); // fails if view held the writer lock
      writer.appendMessage(userMsg("a new question while view watches"));
      const id = writer.appendMessage(assistantMsg("a new answer"));
      await writer.close();
      assert.deepEqual(JSON.parse(await events.event), { version: 1 });
      const model = await getJson<ViewModel>(`${server.url}api/model`);
      assert.equal(model.version, 1);
      assert.equal(model.leafId, id);
      assert.equal(model.activePath[model.activePath.length - 1], id);
    } finally {
      events.close();
      await server.close();
    }
  });

  it("follows a rewrite: pruning renames a new file over the session, and the originals come from the archive", async () => {
    const file = join(dir, "prune-while-viewing.jsonl");
    copyFileSync(EXAMPLE, file);
    const server = await startViewServer(file, { contextWindow: 200_000 });
    const events = nextEvent(`${server.url}api/events`, "change");
    try {
      await events.ready;
      assert.ok(!(await getJson<ViewModel>(`${server.url}api/model`)).nodes.some((n) => n.flags.pruned));
      const report = await pruneToolOutput(file, { config: { protectTokens: 3000, minimumSavings: 0 } });
      assert.ok(report.prunedCount > 0);
      await events.event;
      const model = await getJson<ViewModel>(`${server.url}api/model`);
      const pruned = model.nodes.filter((n) => n.flags.pruned);
      assert.equal(pruned.length, report.prunedCount);
      const { bodies } = await getJson<{ bodies: Record<string, { kind: string; original?: unknown[] }[]> }>(`${server.url}api/bodies?ids=${pruned[0].id}`);
      assert.ok(bodies[pruned[0].id][0].original?.length);
    } finally {
      events.close();
      await server.close();
    }
  });

  it("shows what another program wrote in the session's place, not what it kept from before", async () => {
    const file = join(dir, "rewritten-while-viewing.jsonl");
    const session = SessionManager.open(file);
    session.appendMessage(userMsg("Rename the invoices module."));
    session.appendMessage(assistantMsg("Renamed to billing."));
    await session.close();
    const server = await startViewServer(file, { contextWindow: 200_000 });
    try {
      const previews = async () => (await getJson<ViewModel>(`${server.url}api/model`)).nodes.map((n) => n.preview);
      assert.ok((await previews()).includes("Renamed to billing."));
      // the same entries, one answer changed: no entry more, no prune
      writeFileSync(`${file}.tmp`, readFileSync(file, "utf8").replace("Renamed to billing.", "Renamed to payments."));
      renameSync(`${file}.tmp`, file);
      await server.refresh();
      const now = await previews();
      assert.ok(now.includes("Renamed to payments."), JSON.stringify(now));
      assert.ok(!now.includes("Renamed to billing."));
    } finally {
      await server.close();
    }
  });

  it("polls a database session and sends its changes", async () => {
    const db = join(dir, "view.db");
    const copy = await runBonsai(["copy", EXAMPLE, `sqlite:${db}`]);
    assert.equal(copy.code, 0, copy.stderr);
    const location = /-> (sqlite:\S+#\S+)/.exec(copy.stdout)![1];
    const server = await startViewServer(location, { contextWindow: 200_000, pollMs: 100 });
    const events = nextEvent(`${server.url}api/events`, "change");
    try {
      await events.ready;
      const count = (await getJson<ViewModel>(`${server.url}api/model`)).nodes.length;
      const writer = await SessionManager.openUrl(location);
      writer.appendMessage(userMsg("appended to the database"));
      await writer.close();
      await events.event;
      const model = await getJson<ViewModel>(`${server.url}api/model`);
      assert.equal(model.nodes.length, count + 1);
    } finally {
      events.close();
      await server.close();
    }
  });
});
