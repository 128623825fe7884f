/**
 * A project held in memory, and the four coding tools (read, write, edit, bash) working on it,
 * so the example session's tool results agree with each other: an edit really changes what the
 * next read returns, and an edit whose old text is not in the file fails like the real tool.
 */

export interface ToolOutcome {
  text: string;
  isError: boolean;
  details?: unknown;
}

export class Workspace {
  private readonly files = new Map<string, string>();

  constructor(
    readonly root: string,
    initial: Record<string, string>,
  ) {
    for (const [path, content] of Object.entries(initial)) this.files.set(path, content);
  }

  has(path: string): boolean {
    return this.files.has(path);
  }

  content(path: string): string {
    const text = this.files.get(path);
    if (text === undefined) throw new Error(`example script bug: ${path} does not exist`);
    return text;
  }

  paths(): string[] {
    return [...this.files.keys()].sort();
  }

  read(path: string, offset?: number, limit?: number): ToolOutcome {
    const text = this.files.get(path);
    if (text === undefined) {
      return { text: `ENOENT: no such file or directory, access '${this.root}/${path}'`, isError: true };
    }
    if (offset === undefined && limit === undefined) return { text, isError: false };
    const lines = text.split("\n");
    const start = (offset ?? 1) - 1;
    const end = limit === undefined ? lines.length : Math.min(lines.length, start + limit);
    let out = lines.slice(start, end).join("\n");
    if (end < lines.length) out += `\n\n[${lines.length - end} more lines in file. Use offset=${end + 1} to continue.]`;
    return { text: out, isError: false };
  }

  write(path: string, content: string): ToolOutcome {
    this.files.set(path, content);
    return { text: `Successfully wrote ${content.length} bytes to ${path}`, isError: false };
  }

  /** Each old text must occur exactly once in the original file, as the real edit tool demands. */
  edit(path: string, edits: { oldText: string; newText: string }[]): ToolOutcome {
    const original = this.files.get(path);
    if (original === undefined) {
      return { text: `File not found: ${path}`, isError: true };
    }
    let updated = original;
    for (const { oldText, newText } of edits) {
      const at = original.indexOf(oldText);
      if (at === -1) {
        return {
          text: `Could not find the exact text in ${path}. The old text must match exactly including all whitespace and newlines.`,
          isError: true,
        };
      }
      if (original.indexOf(oldText, at + 1) !== -1) {
        return {
          text: `Found multiple occurrences of the text in ${path}. Add more context to make the match unique.`,
          isError: true,
        };
      }
      updated = updated.replace(oldText, newText);
    }
    this.files.set(path, updated);
    const { diff, firstChangedLine } = lineDiff(original, updated);
    return { text: `Successfully replaced ${edits.length} block(s) in ${path}.`, isError: false, details: { diff, firstChangedLine } };
  }

  /** `grep -n` over the workspace: what the agent would see for a plain substring search. */
  grep(pattern: string, under = ""): string {
    const hits: string[] = [];
    for (const path of this.paths()) {
      if (!path.startsWith(under)) continue;
      this.content(path)
        .split("\n")
        .forEach((line, i) => {
          if (line.includes(pattern)) hits.push(`${path}:${i + 1}:${line}`);
        });
    }
    return hits.join("\n");
  }

  /** A `find`-like listing of files under a folder. */
  list(under = ""): string {
    return this.paths()
      .filter((p) => p.startsWith(under))
      .map((p) => `./${p}`)
      .join("\n");
  }
}

/** A compact unified-style diff of the changed region, with line numbers, like the edit tool's details. */
export function lineDiff(before: string, after: string): { diff: string; firstChangedLine: number } {
  const a = before.split("\n");
  const b = after.split("\n");
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tailA = a.length - 1;
  let tailB = b.length - 1;
  while (tailA >= head && tailB >= head && a[tailA] === b[tailB]) {
    tailA--;
    tailB--;
  }
  const lines: string[] = [];
  const context = 2;
  for (let i = Math.max(0, head - context); i < head; i++) lines.push(` ${String(i + 1).padStart(3)} ${a[i]}`);
  for (let i = head; i <= tailA; i++) lines.push(`-${String(i + 1).padStart(3)} ${a[i]}`);
  for (let i = head; i <= tailB; i++) lines.push(`+${String(i + 1).padStart(3)} ${b[i]}`);
  for (let i = tailB + 1; i < Math.min(b.length, tailB + 1 + context); i++) lines.push(` ${String(i + 1).padStart(3)} ${b[i]}`);
  return { diff: lines.join("\n"), firstChangedLine: head + 1 };
}

/** Output of the project's `npm test` (node:test spec reporter) for a list of test outcomes. */
export function testRun(
  suite: string,
  results: { name: string; ok: boolean; ms: number; failure?: string }[],
  durationMs: number,
  version = "0.3.2",
): { output: string; exitCode: number } {
  const lines = ["", `> tasktrack@${version} test`, "> node --import tsx --test test/*.test.ts", "", `▶ ${suite}`];
  // node prints durations with six decimals; derive plausible digits from the test's name
  const precise = (r: { name: string; ms: number }) => (r.ms + ((r.name.length * 0.1373 + r.ms * 0.0711) % 0.999)).toFixed(6);
  for (const r of results) {
    lines.push(`  ${r.ok ? "✔" : "✖"} ${r.name} (${precise(r)}ms)`);
    if (!r.ok && r.failure) lines.push(...r.failure.split("\n").map((l) => `    ${l}`));
  }
  const failed = results.filter((r) => !r.ok).length;
  lines.push(`${failed ? "✖" : "▶"} ${suite} (${(durationMs * 0.8).toFixed(6)}ms)`);
  lines.push(
    `ℹ tests ${results.length}`,
    "ℹ suites 1",
    `ℹ pass ${results.length - failed}`,
    `ℹ fail ${failed}`,
    "ℹ cancelled 0",
    "ℹ skipped 0",
    "ℹ todo 0",
    `ℹ duration_ms ${durationMs.toFixed(6)}`,
  );
  if (failed) {
    lines.push("", "✖ failing tests:", "");
    for (const r of results.filter((x) => !x.ok)) lines.push(`test at test/tasks.test.ts`, `✖ ${r.name} (${precise(r)}ms)`, ...(r.failure ?? "").split("\n").map((l) => `  ${l}`), "");
  }
  return { output: lines.join("\n"), exitCode: failed ? 1 : 0 };
}
