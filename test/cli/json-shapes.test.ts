/**
 * Issue 19, item 11: every JSON shape of the CLI is documented in docs/json.md, and each command's
 * output is checked against its example there, key for key and in order.
 */
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { ROOT, runBonsai } from "../helpers/cli.js";
import { REAL_SESSION } from "../helpers/fixtures.js";

const EXAMPLE = join(ROOT, "examples/coding-session.jsonl");
const tmp = mkdtempSync(join(tmpdir(), "bonsai-json-"));
after(() => rmSync(tmp, { recursive: true, force: true }));
let copies = 0;
function copyOf(source: string): string {
  const dir = join(tmp, `c${++copies}`);
  mkdirSync(dir);
  const file = join(dir, "session.jsonl");
  copyFileSync(source, file);
  return file;
}

/** The documented examples, by the name after `shape=` on their fence. */
function documentedShapes(): Map<string, unknown> {
  const text = readFileSync(join(ROOT, "docs/json.md"), "utf8");
  const shapes = new Map<string, unknown>();
  for (const match of text.matchAll(/```json shape=([\w-]+)\n([\s\S]*?)```/g)) shapes.set(match[1], JSON.parse(match[2]));
  return shapes;
}

const isPlaceholder = (value: unknown) => typeof value === "string" && /^<.+>$/.test(value);
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** Where `actual` differs from the documented example `doc` (see the reading rules in docs/json.md). */
function differences(doc: unknown, actual: unknown, at = "$"): string[] {
  if (isPlaceholder(doc) || doc === null) return [];
  if (Array.isArray(doc)) {
    if (!Array.isArray(actual)) return [`${at}: expected an array`];
    return doc.length === 0 ? [] : actual.flatMap((item, i) => differences(doc[0], item, `${at}[${i}]`));
  }
  if (isObject(doc)) {
    if (actual === null) return [];
    if (!isObject(actual)) return [`${at}: expected an object`];
    const keys = Object.keys(doc);
    if (keys.length === 1 && isPlaceholder(keys[0])) return Object.entries(actual).flatMap(([k, v]) => differences(doc[keys[0]], v, `${at}.${k}`));
    const documented = keys.map((k) => k.replace(/\?$/, ""));
    const problems: string[] = [];
    for (const key of Object.keys(actual)) if (!documented.includes(key)) problems.push(`${at}.${key}: not documented`);
    keys.forEach((key, i) => {
      const name = documented[i];
      if (!(name in actual)) {
        if (!key.endsWith("?")) problems.push(`${at}.${name}: documented but missing`);
        return;
      }
      problems.push(...differences(doc[key], actual[name], `${at}.${name}`));
    });
    const order = Object.keys(actual).filter((k) => documented.includes(k));
    const expected = documented.filter((k) => k in actual);
    if (problems.length === 0 && order.join() !== expected.join()) problems.push(`${at}: keys in the order ${order.join(", ")}, documented ${expected.join(", ")}`);
    return problems;
  }
  return [];
}

describe("docs/json.md", () => {
  const shapes = documentedShapes();
  const runs: [string, () => string[]][] = [
    ["error", () => ["info", join(tmp, "missing.jsonl"), "--json"]],
    ["info", () => ["info", EXAMPLE, "--json"]],
    ["tree", () => ["tree", EXAMPLE, "--json"]],
    ["context", () => ["context", EXAMPLE, "--json", "--last", "3"]],
    ["context-dropped", () => ["context", EXAMPLE, "--dropped", "--json"]],
    ["label", () => ["label", copyOf(EXAMPLE), "0bd6170e", "start", "--json"]],
    ["pin", () => ["pin", copyOf(EXAMPLE), "0bd6170e", "--json"]],
    ["migrate", () => ["migrate", copyOf(REAL_SESSION), "--json"]],
    ["checkout", () => ["checkout", copyOf(EXAMPLE), "0bd6170e", "--summarize", "--json"]],
    ["checkout-dry-run", () => ["checkout", EXAMPLE, "0bd6170e", "--dry-run", "--json"]],
    ["compact", () => ["compact", copyOf(EXAMPLE), "--json"]],
    ["compact-dry-run", () => ["compact", EXAMPLE, "--dry-run", "--json"]],
    // the example holds one compaction: undoing it copies what came after
    ["uncompact", () => ["uncompact", copyOf(EXAMPLE), "--json"]],
    ["prune", () => ["prune", copyOf(EXAMPLE), "--protect", "0", "--min-savings", "0", "--json"]],
    ["ls", () => ["ls", join(ROOT, "examples"), "--json"]],
    ["settings", () => ["settings", "--json"]],
    ["eval", () => ["eval", EXAMPLE, "--rounds", "1", "--json"]],
    ["copy", () => {
      const file = copyOf(EXAMPLE);
      return ["copy", file, `sqlite:${join(tmp, "copies.db")}`, "--json"];
    }],
  ];

  it("documents every shape that is checked here, and nothing else", () => {
    assert.deepEqual([...shapes.keys()].sort(), [...runs.map(([name]) => name), "prune-restore"].sort());
  });

  for (const [name, args] of runs) {
    it(`${name}: the output has the documented keys, in order`, async () => {
      const run = await runBonsai(args());
      assert.equal(run.code, name === "error" ? 1 : 0, run.stderr);
      assert.deepEqual(differences(shapes.get(name), JSON.parse(run.stdout)), []);
    });
  }

  it("prune-restore: the output has the documented keys, in order", async () => {
    const file = copyOf(EXAMPLE);
    assert.equal((await runBonsai(["prune", file, "--protect", "0", "--min-savings", "0"])).code, 0);
    const run = await runBonsai(["prune", file, "--restore", "--json"]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(differences(shapes.get("prune-restore"), JSON.parse(run.stdout)), []);
  });

  it("the checker itself notices an undocumented, a missing and a reordered key", () => {
    assert.deepEqual(differences({ a: 1, "b?": 2 }, { a: 1 }), []);
    assert.deepEqual(differences({ a: 1 }, { a: 1, c: 3 }), ["$.c: not documented"]);
    assert.deepEqual(differences({ a: 1, b: 2 }, { a: 1 }), ["$.b: documented but missing"]);
    assert.equal(differences({ a: 1, b: 2 }, { b: 2, a: 1 }).length, 1);
    assert.deepEqual(differences({ m: { "<k>": { x: 1 } } }, { m: { p: { x: 1 }, q: { y: 1 } } }), ["$.m.q.y: not documented", "$.m.q.x: documented but missing"]);
  });
});
