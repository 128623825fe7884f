/**
 * How `bonsai prune` prints its reports: what was (or would be) pruned as a table of id, tool and
 * tokens, capped at a limit; a refusal with its numbers (what could be saved, the minimum, whose
 * output fills the context); a restore.
 */
import type { PruneReport, RestoreReport } from "../ops/prune-report.js";
import { type Colors, formatCount } from "./output.js";
import { plural } from "./plural.js";

/** Rows of the dry-run table shown unless --limit says otherwise. */
export const DEFAULT_PRUNE_LIMIT = 20;

export function formatPrune(r: PruneReport, c: Colors, limit = DEFAULT_PRUNE_LIMIT): string {
  if (r.prunedCount === 0) return formatRefusal(r);
  const results = plural(r.prunedCount, "tool result");
  const lines = [
    c.bold(r.dryRun ? `would prune ${results} in ${r.file} (dry run: nothing written)` : `pruned ${results} in ${r.file}`),
    `tokens: ${formatCount(r.contextTokensBefore)} before, ${c.green(formatCount(r.contextTokensAfter))} after (estimated context; ${formatCount(r.tokensSaved)} saved)`,
    ...entryTable(r.entries, c, limit),
  ];
  if (r.archive) lines.push(`originals archived in ${r.archive}; \`bonsai prune ${r.file} --restore\` puts them back`);
  else if (r.contextEdits && !r.dryRun) lines.push(`appended as context edits, which pi 1.x reads: every earlier line is unchanged; \`bonsai prune ${r.file} --restore\` appends edits that undo them`);
  return lines.join("\n");
}

function entryTable(entries: PruneReport["entries"], c: Colors, limit: number): string[] {
  const shown = entries.slice(0, limit);
  const idWidth = Math.max(2, ...shown.map((e) => e.id.length));
  const toolWidth = Math.max(4, ...shown.map((e) => e.toolName.length));
  const tokens = shown.map((e) => formatCount(e.tokens));
  const tokenWidth = Math.max(6, ...tokens.map((t) => t.length));
  const lines = [c.dim(`  ${"id".padEnd(idWidth)} ${"tool".padEnd(toolWidth)} ${"tokens".padStart(tokenWidth)}`)];
  shown.forEach((e, i) => {
    lines.push(`  ${e.id.padEnd(idWidth)} ${e.toolName.padEnd(toolWidth)} ${tokens[i].padStart(tokenWidth)}`);
  });
  if (entries.length > shown.length) lines.push(c.dim(`  … and ${entries.length - shown.length} more (--limit N shows more, --json all)`));
  return lines;
}

/** Why nothing is pruned, in numbers: the savings against the minimum, and the output by tool. */
function formatRefusal(r: PruneReport): string {
  const total = r.byTool.reduce((sum, t) => sum + t.tokens, 0);
  const results = r.byTool.reduce((sum, t) => sum + t.results, 0);
  const why =
    r.couldSave === 0
      ? `no tool output outside the newest ${formatCount(r.protectTokens)} tokens (--protect) can be pruned`
      : `pruning would save ${formatCount(r.couldSave)} tokens, less than the minimum of ${formatCount(r.minimumSavings)} (--min-savings)`;
  const lines = [`nothing to prune in ${r.file}: ${why}`];
  if (results === 0) return `${lines[0]}\nno tool output in the context`;
  lines.push(
    `tool output in the context: ${formatCount(total)} tokens in ${plural(results, "result")}; the newest ${formatCount(r.protectTokens)} tokens are protected (--protect)`,
  );
  const nameWidth = Math.max(...r.byTool.map((t) => t.toolName.length));
  const countWidth = Math.max(...r.byTool.map((t) => plural(t.results, "result").length));
  const tokenWidth = Math.max(...r.byTool.map((t) => formatCount(t.tokens).length));
  for (const t of r.byTool) {
    const row = `  ${t.toolName.padEnd(nameWidth)} ${plural(t.results, "result").padEnd(countWidth)} ${formatCount(t.tokens).padStart(tokenWidth)} tokens`;
    lines.push(t.neverPruned ? `${row}  never pruned` : row);
  }
  return lines.join("\n");
}

export function formatRestore(r: RestoreReport): string {
  const restored = plural(r.restored.length, "tool result");
  const from = r.archive ? `from ${r.archive}` : "by appending context edits";
  const lines = [r.restored.length > 0 ? `restored ${restored} in ${r.file} ${from}` : `nothing restored in ${r.file}`];
  for (const id of r.restored) lines.push(`  ${id}`);
  for (const miss of r.notRestored) lines.push(`  ${miss.entryId}: ${miss.reason}`);
  return lines.join("\n");
}
