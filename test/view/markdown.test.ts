import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { boundBodies } from "../../src/view/bound.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { toJsonl } from "../../src/storage/file-writer.js";
import { boundedRender, exportSession } from "../../src/view/export.js";
import { fence, sessionMarkdown } from "../../src/view/markdown.js";
import { readViewModel } from "../../src/view/source.js";
import { assistantEntry, tempDir, userEntry } from "../helpers/session-builders.js";
import { compactedExample } from "../helpers/view-sessions.js";

const { dir, cleanup } = tempDir();
after(cleanup);
const example = compactedExample(dir);
const bytes = (s: string) => Buffer.byteLength(s);

describe("fence", () => {
  it("is longer than any run of backticks inside", () => {
    assert.equal(fence("a ```` b"), "`````\na ```` b\n`````");
    assert.equal(fence("plain", "json"), "```json\nplain\n```");
  });
});

describe("sessionMarkdown", () => {
  it("writes the active path, with thinking, tool output and the compaction summary folded away", async () => {
    const { file, compactionId, leafId } = await example;
    const model = await readViewModel(file, { withBodies: true, contextWindow: 0 });
    const md = sessionMarkdown(model);
    assert.match(md, /^# tasktrack: pagination, rate limiting, 0\.4\.0\n/);
    for (const id of model.activePath) assert.ok(md.includes(`\`${id}\``), `${id} is in the Markdown`);
    const offPath = model.nodes.filter((n) => !model.activePath.includes(n.id));
    assert.ok(offPath.length > 0);
    assert.ok(!md.includes(`### ${offPath[0].kind} · \`${offPath[0].id}\``), "other branches are left out");
    assert.match(md, /<details><summary>thinking<\/summary>/);
    assert.match(md, /<details><summary>archived original<\/summary>/);
    assert.match(md, new RegExp(`### compaction · \`${compactionId}\` · [\\d,]+ → [\\d,]+ tokens, keeps from`));
    assert.match(md, /<details><summary>compaction summary<\/summary>/);
    assert.ok(md.includes(`\`${leafId}\`\n\n_← current leaf_`));
  });

  it("writes every branch with --all, each marked where it forks", async () => {
    const { file } = await example;
    const model = await readViewModel(file, { withBodies: true, contextWindow: 0 });
    const md = sessionMarkdown(model, { all: true });
    for (const node of model.nodes) assert.ok(md.includes(`\`${node.id}\``), `${node.id}`);
    assert.match(md, /_branch from `[0-9a-f]+`_/);
    assert.match(md, /_branch from `[0-9a-f]+` \(active\)_/);
  });

  it("stays within a byte bound and says what it left out", async () => {
    const { file } = await example;
    const model = await readViewModel(file, { withBodies: true, contextWindow: 0 });
    const full = sessionMarkdown(model);
    const max = Math.floor(bytes(full) / 3);
    const md = boundedRender(model, max, (m) => sessionMarkdown(m));
    assert.ok(bytes(md) <= max, `${bytes(md)} <= ${max}`);
    assert.match(md, /> This export is bounded to [\d,]+ bytes: [\d,]+ blocks were clipped or left out/);
    assert.match(md, /_… [\d,]+ more characters left out of this export_/);
    for (const id of model.activePath) assert.ok(md.includes(`\`${id}\``), "every entry is still there");
  });

  it("stays within a bound so tight that even clipped bodies do not fit: the bodies are left out", async () => {
    const { file } = await example;
    const model = await readViewModel(file, { withBodies: true, contextWindow: 0 });
    const omitted = { blocks: 0, bytes: 0, maxBytes: 1 };
    const skeleton = bytes(sessionMarkdown({ ...model, bodies: {}, omitted }));
    const clipped = boundBodies(model.bodies ?? {}, 0);
    const max = skeleton + 450;
    assert.ok(bytes(sessionMarkdown({ ...model, bodies: clipped.bodies, omitted: { ...clipped.omitted, maxBytes: max } })) > max, "the clipped bodies alone do not fit");
    const md = boundedRender(model, max, (m) => sessionMarkdown(m));
    assert.ok(bytes(md) <= max, `${bytes(md)} <= ${max}`);
    for (const id of model.activePath) assert.ok(md.includes(`\`${id}\``), "every entry is still there");
  });

  it("is written whole when it fits, however large the bodies of the branches it does not show", async () => {
    // five branches of long answers off one question; the Markdown shows only the active one
    const entries = [userEntry("q", null, "which approach?", 1)];
    for (let b = 0; b < 5; b++) {
      let parent = "q";
      for (let i = 0; i < 10; i++) {
        const id = `b${b}e${i}`;
        entries.push(i % 2 === 0 ? assistantEntry(id, parent, `${"long answer ".repeat(400)}${id}`, 2 + b * 10 + i) : userEntry(id, parent, `go on ${id}`, 2 + b * 10 + i));
        parent = id;
      }
    }
    const file = join(dir, "branches.jsonl");
    writeFileSync(file, toJsonl([{ type: "session", version: 3, id: "s", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" }, ...entries]));
    const whole = await exportSession(file, { format: "md", maxBytes: 100 * 1024 * 1024, contextWindow: 0 });
    assert.ok(whole.includes("b4e8") && !whole.includes("b0e8"), "the active branch only");
    const exact = await exportSession(file, { format: "md", maxBytes: bytes(whole), contextWindow: 0 });
    assert.equal(exact, whole, "nothing clipped when the whole fits");
  });
});
