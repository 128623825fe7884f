/**
 * The command examples of the README and of docs/*.md, made from the bundled example session. A
 * fenced block whose first line is `$ bonsai …` and names `session.jsonl` is an example: the
 * command runs on a copy of `examples/coding-session.jsonl` named `session.jsonl` in a temporary
 * directory (so `examples/` is never changed), and the block holds its output, with that
 * directory written as `/home/you/project`: paths print as the user sees them, absolute. A block
 * whose last line is `…` shows only as many lines as it has before that line.
 *
 *   node --import tsx scripts/readme-examples.ts           says which examples differ (exit 1)
 *   node --import tsx scripts/readme-examples.ts --write   rewrites them in place
 *
 * Entries a command creates (a compaction, a branch summary) get fresh ids on every run; the
 * check (here and in test/readme.test.ts) treats any id that is not in the example as the same.
 */
import { execFile } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = resolve(import.meta.dirname, "..");
export const README = join(ROOT, "README.md");
/** Where the examples' session copy appears to be: a folder of the user's. */
export const SHOWN_DIR = "/home/you/project";

/** The Markdown files that hold examples: the README and docs/*.md. */
export function documents(): string[] {
  const docs = join(ROOT, "docs");
  return [README, ...readdirSync(docs).filter((name) => name.endsWith(".md")).sort().map((name) => join(docs, name))];
}
const EXAMPLE = join(ROOT, "examples/coding-session.jsonl");
const MAIN = join(ROOT, "src/cli/main.ts");
/** tsx by its path: the commands run in a temporary directory, where the package is not found by name */
const TSX = fileURLToPath(import.meta.resolve("tsx"));
/**
 * How `bonsai` runs: the CLI bundled for this `npm test` run when there is one (BONSAI_TEST_CLI,
 * scripts/test-cli-bundle.ts: no TypeScript compiled per command), else the sources through tsx.
 */
const bonsaiArgs = (): string[] => {
  const bundle = process.env.BONSAI_TEST_CLI;
  return bundle && existsSync(bundle) ? [bundle] : ["--import", pathToFileURL(TSX).href, MAIN];
};

export interface ReadmeExample {
  /** the command as written, without `$ ` */
  command: string;
  /** the block's lines after the command */
  shown: string[];
  /** where the block's body (after the command line) starts and ends in the README's lines */
  from: number;
  to: number;
}

/** Every `$ bonsai … session.jsonl …` block of the README. */
export function readmeExamples(readme: string): ReadmeExample[] {
  const lines = readme.split("\n");
  const examples: ReadmeExample[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== "```" || !lines[i + 1]?.startsWith("$ bonsai ") || !words(lines[i + 1]).includes("session.jsonl")) continue;
    const end = lines.indexOf("```", i + 2);
    if (end < 0) break;
    examples.push({ command: lines[i + 1].slice(2), shown: lines.slice(i + 2, end), from: i + 2, to: end });
    i = end;
  }
  return examples;
}

/** The words of a command line, with '…' and "…" quoting. */
function words(command: string): string[] {
  return [...command.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]);
}

/** What the command prints on stdout, run on a fresh copy of the example as `session.jsonl`. */
export function runExample(command: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "bonsai-readme-"));
  copyFileSync(EXAMPLE, join(dir, "session.jsonl"));
  const [, ...args] = words(command);
  return new Promise((done, fail) => {
    execFile(
      process.execPath,
      [...bonsaiArgs(), ...args],
      { cwd: dir, env: { ...process.env, NO_COLOR: "1", BONSAI_DEBUG: "" }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        rmSync(dir, { recursive: true, force: true });
        if (error) fail(new Error(`${command}: exit ${error.code}: ${stderr}`));
        else done(stdout.split(dir).join(SHOWN_DIR));
      },
    );
  });
}

/** The block's lines for `output`: all of it, or as many lines as the block shows before its `…`. */
export function shownLines(output: string, shown: readonly string[]): string[] {
  const lines = output.replace(/\n$/, "").split("\n");
  const last = shown.at(-1);
  if (last === undefined || last.trim() !== "…") return lines;
  const keep = shown.length - 1;
  return lines.length > keep ? [...lines.slice(0, keep), last] : lines;
}

/** The ids of the example's entries: any other id in an output is one a command made. */
function exampleIds(): Set<string> {
  const ids = new Set<string>();
  for (const line of readFileSync(EXAMPLE, "utf8").split("\n")) {
    const id = /"id":"([0-9a-f]{8})"/.exec(line)?.[1];
    if (id) ids.add(id);
  }
  return ids;
}

/** The text with every id that the example does not hold written as `<new id>`. */
export function withNewIdsMasked(text: string, known: ReadonlySet<string> = exampleIds()): string {
  return text.replace(/\b[0-9a-f]{8}\b/g, (id) => (known.has(id) ? id : "<new id>"));
}

/** The README with every example's block made from its command's output. */
export async function regenerate(readme: string): Promise<string> {
  const lines = readme.split("\n");
  const examples = readmeExamples(readme);
  const outputs = await Promise.all(examples.map((e) => runExample(e.command)));
  examples.forEach((example, k) => {
    // the block ends at the first fence after its command: a fence in what it shows would end it early
    if (shownLines(outputs[k], example.shown).some((line) => line.trimStart().startsWith("```"))) {
      throw new Error(`$ ${example.command}: the output shown holds a code fence; end the block with a … line before it`);
    }
  });
  // from the last block up, so earlier positions stay valid
  for (let k = examples.length - 1; k >= 0; k--) {
    const example = examples[k];
    lines.splice(example.from, example.to - example.from, ...shownLines(outputs[k], example.shown));
  }
  return lines.join("\n");
}

async function main(): Promise<void> {
  const known = exampleIds();
  let stale = 0;
  for (const path of documents()) {
    const text = readFileSync(path, "utf8");
    const examples = readmeExamples(text);
    if (examples.length === 0) continue;
    const fresh = await regenerate(text);
    const name = relative(ROOT, path);
    if (process.argv.includes("--write")) {
      writeFileSync(path, fresh);
      process.stdout.write(`${name}: ${examples.length} examples written\n`);
      continue;
    }
    const now = readmeExamples(fresh);
    for (const [i, e] of examples.entries()) {
      if (withNewIdsMasked(e.shown.join("\n"), known) === withNewIdsMasked(now[i].shown.join("\n"), known)) continue;
      process.stdout.write(`${name}: differs: $ ${e.command}\n`);
      stale++;
    }
  }
  if (stale > 0) process.exitCode = 1;
  else if (!process.argv.includes("--write")) process.stdout.write("every example runs as shown\n");
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
