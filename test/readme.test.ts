/**
 * The `$ bonsai …` examples of the README and docs/ run as shown on the bundled example (ids of
 * entries the command creates aside), with paths as the user sees them, and running them leaves
 * `examples/` unchanged.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import { documents, readmeExamples, regenerate, SHOWN_DIR, shownLines, withNewIdsMasked } from "../scripts/readme-examples.js";
import { ROOT } from "./helpers/cli.js";

describe("README and docs examples", () => {
  const texts = documents().map((path) => ({ name: relative(ROOT, path), text: readFileSync(path, "utf8") }));
  const all = texts.flatMap(({ text }) => readmeExamples(text));

  it("include the tree, checkout and compact commands, each on session.jsonl (a copy), and no write to examples/", () => {
    const commands = all.map((e) => e.command);
    for (const name of ["tree", "checkout", "compact"]) assert.ok(commands.some((c) => c.startsWith(`bonsai ${name} session.jsonl`)), name);
    for (const { name, text } of texts) {
      assert.doesNotMatch(text, /\$ bonsai (compact|checkout|prune|label|migrate) examples\//, `${name}: no example writes to examples/`);
    }
  });

  it("print what they show, paths as the user sees them", async () => {
    const example = readFileSync(join(ROOT, "examples/coding-session.jsonl"));
    for (const { name, text } of texts) {
      const examples = readmeExamples(text);
      if (examples.length === 0) continue;
      const now = readmeExamples(await regenerate(text));
      examples.forEach((e, i) => {
        assert.equal(withNewIdsMasked(now[i].shown.join("\n")), withNewIdsMasked(e.shown.join("\n")), `${name}: $ ${e.command}`);
      });
    }
    const compact = all.find((e) => e.command === "bonsai compact session.jsonl");
    assert.ok(compact?.shown.some((line) => line.includes(`${SHOWN_DIR}/session.jsonl`)), "the compacted file is named by its absolute path");
    assert.ok(readFileSync(join(ROOT, "examples/coding-session.jsonl")).equals(example), "examples/ unchanged");
  });

  it("keep as many lines as a block shows before its …", () => {
    assert.deepEqual(shownLines("a\nb\nc\nd\n", ["x", "y", "  …"]), ["a", "b", "  …"]);
    assert.deepEqual(shownLines("a\nb\n", ["x", "y", "z", "…"]), ["a", "b"]);
    assert.deepEqual(shownLines("a\nb\n", ["x"]), ["a", "b"]);
  });
});
