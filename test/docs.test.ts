/**
 * The documentation holds together: a short README that leads to every topic in docs/, links that
 * arrive (a file that exists, a heading that exists), and every BONSAI_* variable the code reads
 * listed in docs/settings.md.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, it } from "node:test";
import { ROOT } from "./helpers/cli.js";

const DOCS = join(ROOT, "docs");
const docFiles = readdirSync(DOCS).filter((name) => name.endsWith(".md")).map((name) => join(DOCS, name));
const markdown = [join(ROOT, "README.md"), join(ROOT, "packages/pi-bonsai/README.md"), ...docFiles];

/** The text outside fenced code blocks: links and headings in code are not links. */
function prose(text: string): string {
  return text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, "");
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

const anchorsOf = (text: string) => new Set([...prose(text).matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1])));

/** Relative links `[text](target)` and images, outside code. */
const linksOf = (text: string) => [...prose(text).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]).filter((target) => !/^[a-z]+:/.test(target));

/** The source files that may read environment variables. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" || entry.name === "fixtures" ? [] : sources(path);
    return /\.(ts|mjs)$/.test(entry.name) && !entry.name.startsWith(".") ? [path] : [];
  });
}

describe("documentation", () => {
  it("the README is short and links every topic in docs/", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    assert.ok(readme.split("\n").length <= 200, `README.md has ${readme.split("\n").length} lines; topics belong in docs/`);
    const linked = new Set(linksOf(readme).map((target) => target.split("#")[0]));
    for (const file of docFiles) assert.ok(linked.has(relative(ROOT, file)), `README.md does not link ${relative(ROOT, file)}`);
  });

  it("every relative link arrives at a file, and at a heading in it", () => {
    const broken: string[] = [];
    for (const file of markdown) {
      const text = readFileSync(file, "utf8");
      for (const link of linksOf(text)) {
        const [path, anchor] = link.split("#");
        const target = path === "" ? file : resolve(dirname(file), decodeURI(path));
        const where = `${relative(ROOT, file)}: (${link})`;
        if (!existsSync(target)) broken.push(`${where}: no such file`);
        else if (anchor && statSync(target).isFile() && !anchorsOf(readFileSync(target, "utf8")).has(anchor)) broken.push(`${where}: no such heading`);
      }
    }
    assert.deepEqual(broken, []);
  });

  it("anchors are made the way GitHub makes them", () => {
    assert.equal(anchorOf("Summary quality: verbatim requests, the coverage check and `bonsai eval`"), "summary-quality-verbatim-requests-the-coverage-check-and-bonsai-eval");
    assert.equal(anchorOf("`bonsai settings [--json]`"), "bonsai-settings---json");
  });

  it("docs/settings.md lists every BONSAI_* variable the code reads", () => {
    const table = readFileSync(join(DOCS, "settings.md"), "utf8");
    const texts = ["src", "scripts", "bench", "packages/pi-bonsai/src", "oracle", "test/helpers"].flatMap((dir) => sources(join(ROOT, dir)).map((file) => readFileSync(file, "utf8")));
    // a constant named BONSAI_… (the CLI's arguments in the tests) is not a variable of the environment
    const constants = new Set(texts.flatMap((text) => [...text.matchAll(/\bconst (BONSAI_[A-Z_]+)/g)].map((m) => m[1])));
    const read = new Set(texts.flatMap((text) => [...text.matchAll(/\bBONSAI_[A-Z_]+[A-Z]\b/g)].map((m) => m[0])).filter((name) => !constants.has(name)));
    assert.ok(read.size >= 10, "the scan finds the variables");
    assert.deepEqual([...read].filter((name) => !table.includes(`\`${name}\``)).sort(), []);
  });
});
