/**
 * Issue 19, item 7: the README's `$ bonsai …` examples run as shown on the bundled example (ids
 * of entries the command creates aside), and running them leaves `examples/` unchanged.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { README, readmeExamples, regenerate, shownLines, withNewIdsMasked } from "../scripts/readme-examples.js";
import { ROOT } from "./helpers/cli.js";

describe("README examples", () => {
  const readme = readFileSync(README, "utf8");

  it("include the tree, checkout and compact commands, each on session.jsonl (a copy), and no compact on examples/", () => {
    const commands = readmeExamples(readme).map((e) => e.command);
    for (const name of ["tree", "checkout", "compact"]) assert.ok(commands.some((c) => c.startsWith(`bonsai ${name} session.jsonl`)), name);
    assert.doesNotMatch(readme, /\$ bonsai (compact|checkout|prune|label|migrate) examples\//, "no example writes to examples/");
  });

  it("print what the README shows", async () => {
    const example = readFileSync(join(ROOT, "examples/coding-session.jsonl"));
    const fresh = await regenerate(readme);
    const now = readmeExamples(fresh);
    readmeExamples(readme).forEach((e, i) => {
      assert.equal(withNewIdsMasked(now[i].shown.join("\n")), withNewIdsMasked(e.shown.join("\n")), `$ ${e.command}`);
    });
    assert.ok(readFileSync(join(ROOT, "examples/coding-session.jsonl")).equals(example), "examples/ unchanged");
  });

  it("keep as many lines as a block shows before its …", () => {
    assert.deepEqual(shownLines("a\nb\nc\nd\n", ["x", "y", "  …"]), ["a", "b", "  …"]);
    assert.deepEqual(shownLines("a\nb\n", ["x", "y", "z", "…"]), ["a", "b"]);
    assert.deepEqual(shownLines("a\nb\n", ["x"]), ["a", "b"]);
  });
});
