/**
 * `npm run typecheck` checks the TypeScript in the documentation: every ```ts block of the README,
 * docs/*.md and the pi package's README is compiled against the sources, with `bonsai-sessions`
 * and its subpaths resolving to src/ as they resolve to dist/ for a user. The blocks of one `##`
 * section run on from each other (a later block may use what an earlier one declared); each
 * section is its own scope; imports go to the top of the file, merged by module.
 *
 * scripts/typecheck.ts compiles them in the same program as the sources and tests, and names each
 * error in them by its document and line.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const OUT = join(ROOT, "node_modules", ".bonsai-docs");

export interface Snippet {
  /** the 1-based line of the block's first code line in its document */
  line: number;
  code: string[];
}

/** The ```ts blocks of a Markdown text, grouped by the `##` section they are in. */
export function snippetsBySection(text: string): Snippet[][] {
  const lines = text.split("\n");
  const sections: Snippet[][] = [[]];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].startsWith("## ")) sections.push([]);
    if (!lines[i].startsWith("```")) continue;
    const end = lines.indexOf("```", i + 1);
    if (end < 0) break;
    if (/^```(ts|typescript)\s*$/.test(lines[i])) sections.at(-1)!.push({ line: i + 2, code: lines.slice(i + 1, end) });
    i = end;
  }
  return sections.filter((s) => s.length > 0);
}

const IMPORT = /^import (type )?\{([^}]*)\} from "([^"]+)";$/;

/** One module for a document: merged imports first, then each section in a block of its own, marked with the lines it came from. */
export function moduleOf(sections: readonly Snippet[][]): { text: string; lineMap: number[] } {
  const imports = new Map<string, Set<string>>();
  const body: { text: string; from: number }[] = [];
  for (const section of sections) {
    body.push({ text: "{", from: 0 });
    for (const snippet of section) {
      snippet.code.forEach((code, k) => {
        const m = IMPORT.exec(code.trim());
        if (!m) {
          body.push({ text: code, from: snippet.line + k });
          return;
        }
        const names = imports.get(m[3]) ?? new Set<string>();
        for (const name of m[2].split(",").map((n) => n.trim()).filter(Boolean)) names.add(m[1] ? `type ${name.replace(/^type /, "")}` : name);
        imports.set(m[3], names);
      });
    }
    body.push({ text: "}", from: 0 });
  }
  const head = [...imports].map(([from, names]) => ({ text: `import { ${[...names].join(", ")} } from "${from}";`, from: 0 }));
  const all = [...head, { text: "export {};", from: 0 }, ...body];
  return { text: `${all.map((l) => l.text).join("\n")}\n`, lineMap: all.map((l) => l.from) };
}

function documents(): string[] {
  const docs = join(ROOT, "docs");
  return [join(ROOT, "README.md"), join(ROOT, "packages/pi-bonsai/README.md"), ...readdirSync(docs).filter((n) => n.endsWith(".md")).map((n) => join(docs, n))];
}

/**
 * Writes each document's TypeScript as one module under node_modules/.bonsai-docs and returns,
 * by module name, the document and the line each module line came from.
 */
export function writeSnippetModules(): Map<string, { doc: string; lineMap: number[] }> {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const maps = new Map<string, { doc: string; lineMap: number[] }>();
  for (const doc of documents()) {
    const sections = snippetsBySection(readFileSync(doc, "utf8"));
    if (sections.length === 0) continue;
    const name = `${relative(ROOT, doc).replace(/[/.]/g, "_")}.ts`;
    const { text, lineMap } = moduleOf(sections);
    writeFileSync(join(OUT, name), text);
    maps.set(name, { doc: relative(ROOT, doc), lineMap });
  }
  return maps;
}

/** Names each error of tsc's `output` in a snippet module by the document and line it came from. */
export function mapSnippetErrors(output: string, maps: ReadonlyMap<string, { doc: string; lineMap: number[] }>): string {
  return output.replace(/(?:node_modules\/\.bonsai-docs\/)?([\w-]+\.ts)\((\d+),(\d+)\)/g, (whole, file: string, line: string) => {
    const map = maps.get(file);
    const from = map?.lineMap[Number(line) - 1];
    return map && from ? `${map.doc}:${from}` : whole;
  });
}

/** Where the snippet modules are written, for a tsconfig that includes them. */
export const SNIPPET_DIR = OUT;
