/**
 * What a user of the published package gets: what `import` of the library and `bonsai --help`
 * load at start-up, and which files `npm pack` ships.
 */
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { ROOT } from "./helpers/cli.js";

const dir = mkdtempSync(join(tmpdir(), "bonsai-package-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The npm packages a Node program loads, in the order it first asks for them: a module hook
 * records every resolved URL under node_modules/ (tsx itself is left out).
 */
function packagesLoaded(args: string[]): string[] {
  const hooks = join(dir, "hooks.mjs");
  writeFileSync(
    hooks,
    `export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  const m = result.url.match(/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//);
  if (m && m[1] !== "tsx" && m[1] !== "esbuild" && m[1] !== "get-tsconfig" && m[1] !== "resolve-pkg-maps") process.stderr.write("LOADED " + m[1] + "\\n");
  return result;
}`,
  );
  const register = join(dir, "register.mjs");
  writeFileSync(register, `import { register } from "node:module"; register(${JSON.stringify(pathToFileURL(hooks).href)});`);
  const run = spawnSync(process.execPath, ["--import", register, "--import", "tsx", ...args], { cwd: ROOT, encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  const stderr = run.stderr;
  return [...new Set(stderr.split("\n").flatMap((line) => (line.startsWith("LOADED ") ? [line.slice(7)] : [])))];
}

describe("start-up", () => {
  it("importing the library loads no npm package until a feature needs it", () => {
    const entry = join(dir, "import.mjs");
    writeFileSync(entry, `await import(${JSON.stringify(pathToFileURL(join(ROOT, "src/index.ts")).href)});`);
    assert.deepEqual(packagesLoaded([entry]), []);
  });

  it("bonsai --help loads only the argument parser and colors", () => {
    assert.deepEqual(packagesLoaded([join(ROOT, "src/cli/main.ts"), "--help"]).sort(), ["commander", "picocolors"]);
  });
});

describe("npm pack", () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  const packed = (): string[] => {
    const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: ROOT, encoding: "utf8" });
    return (JSON.parse(out)[0].files as { path: string }[]).map((f) => f.path);
  };

  it("ships the built library, its types, the command, the example, the docs the README links and the license, and nothing else", () => {
    const files = packed();
    const needed = ["LICENSE", "README.md", "package.json", "examples/coding-session.jsonl", manifest.bin.bonsai, "dist/index.js", "dist/index.d.ts", "dist/view/page.bundle.js"];
    const docs = [...readFileSync(join(ROOT, "README.md"), "utf8").matchAll(/\]\((docs\/[\w.-]+\.md)/g)].map((m) => m[1]);
    assert.ok(docs.length >= 10, "the README links its docs");
    for (const file of [...needed, ...docs]) assert.ok(files.includes(file), `${file} is packed`);
    const stray = files.filter((f) => !/^dist\/.*\.(js|d\.ts)$/.test(f) && !/^docs\/[\w.-]+\.md$/.test(f) && !["LICENSE", "README.md", "package.json", "examples/coding-session.jsonl"].includes(f));
    assert.deepEqual(stray, [], "no source maps, sources, generators or scripts");
  });

  it("has a name that is not the unrelated `bonsai` package, and the command is still `bonsai`", () => {
    assert.notEqual(manifest.name, "bonsai");
    assert.deepEqual(Object.keys(manifest.bin), ["bonsai"]);
    assert.match(readFileSync(join(ROOT, "README.md"), "utf8"), new RegExp(`npm install ${manifest.name}`));
  });
});

describe("installing the packed package", () => {
  it("installs into an empty project on this Node with no engine warning and nothing compiled, and its command runs", () => {
    const project = join(dir, "consumer");
    const tarball = execFileSync("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", dir], { cwd: ROOT, encoding: "utf8" }).trim().split("\n").at(-1) as string;
    execFileSync("mkdir", ["-p", project]);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true }));
    // from npm's cache where the repository's own install filled it; a consumer has no lock file,
    // so a dependency's range may resolve to a newer version, which comes from the registry
    const install = spawnSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", join(dir, tarball)], { cwd: project, encoding: "utf8" });
    assert.equal(install.status, 0, install.stderr);
    // a dependency of a dependency that wants a newer Node than bonsai's (cookie 2 via light-my-request)
    assert.doesNotMatch(install.stderr, /EBADENGINE/, install.stderr);
    const installed = join(project, "node_modules", "bonsai-sessions");
    const version = spawnSync(process.execPath, [join(installed, "dist/cli/main.js"), "--version"], { encoding: "utf8" });
    assert.equal(version.stdout, `${JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version}\n`);
    // the SQLite driver came as a binary inside an npm package, not built from source
    const copied = spawnSync(process.execPath, [join(installed, "dist/cli/main.js"), "copy", join(installed, "examples/coding-session.jsonl"), `sqlite:${join(project, "s.db")}#a`], { encoding: "utf8" });
    assert.equal(copied.status, 0, copied.stderr);
  });
});
