/** What the benches against pi share: ratios with their spread, and where their results go. */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { median } from "./report.js";

const RESULTS = resolve(import.meta.dirname, "results");

/** The median of `xs` with the lowest and highest, e.g. `2.23 (1.88–3.99)`; `-` for none. */
export const ratioText = (xs: readonly number[]): string =>
  xs.length === 0 ? "-" : `${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)})`;

/** Prints `md` and, unless `--no-write` was passed, writes bench/results/NAME.md and NAME.json. */
export function publish(name: string, md: string, json: unknown, argv: readonly string[]): void {
  console.log(`\n${md}`);
  if (argv.includes("--no-write")) return;
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(join(RESULTS, `${name}.json`), `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(join(RESULTS, `${name}.md`), md);
}
