/**
 * `npm run typecheck`: the sources, tests, benches and examples, the TypeScript blocks of the
 * documentation (scripts/docs-snippets.ts), and the session page's browser code (its own
 * tsconfig, with the DOM's types). The first two are one program, so the sources are checked once
 * for both; the page's program runs beside it. Errors in the documentation are named by document
 * and line.
 *
 *   node --import tsx scripts/typecheck.ts     exit 1 with tsc's errors
 */
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { mapSnippetErrors, SNIPPET_DIR, writeSnippetModules } from "./docs-snippets.js";

const ROOT = resolve(import.meta.dirname, "..");
const TSC = join(ROOT, "node_modules/typescript/bin/tsc");

/** A tsconfig beside the snippet modules: the repository's own, with the modules added and the package's name resolving to src/. */
function writeProgramConfig(): string {
  const base = JSON.parse(readFileSync(join(ROOT, "tsconfig.json"), "utf8")) as { include: string[]; exclude: string[] };
  const up = (path: string) => relative(SNIPPET_DIR, join(ROOT, path));
  const path = join(SNIPPET_DIR, "tsconfig.json");
  writeFileSync(
    path,
    JSON.stringify({
      extends: up("tsconfig.json"),
      compilerOptions: { noEmit: true, rootDir: up("."), paths: { "bonsai-sessions": [up("src/index.ts")], "bonsai-sessions/*": [up("src/exports/*.ts")] } },
      include: [...base.include.map(up), "*.ts"],
      exclude: base.exclude.map(up),
    }),
  );
  return path;
}

/** Runs tsc on one project; resolves with its output when it fails, with nothing when it passes. */
function tsc(project: string): Promise<string | undefined> {
  return new Promise((done) => {
    execFile(process.execPath, [TSC, "-p", project], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      done(error ? `${stdout}${stderr}` || String(error) : undefined);
    });
  });
}

async function main(): Promise<number> {
  const maps = writeSnippetModules();
  const failures = await Promise.all([tsc(writeProgramConfig()), tsc(join(ROOT, "src/view/page/tsconfig.json"))]);
  for (const output of failures) if (output) process.stderr.write(mapSnippetErrors(output, maps));
  if (failures.some(Boolean)) return 1;
  process.stdout.write(`typecheck: the sources, tests, session page and the TypeScript of ${maps.size} documents compile\n`);
  return 0;
}

main().then((code) => process.exit(code));
