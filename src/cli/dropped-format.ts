/** `bonsai context --dropped` for a terminal: per compaction, what its summary does not mention. */
import type { DroppedReport } from "../ops/dropped.js";
import type { Colors } from "./output.js";

export function formatDropped(report: DroppedReport, c: Colors): string {
  if (report.compactions.length === 0) return "no compaction on the current branch: nothing was dropped";
  const out: string[] = [];
  for (const compaction of report.compactions) {
    const kept = compaction.facts - compaction.dropped.length;
    out.push(
      `${c.bold(`compaction ${compaction.compactionId}`)}: summarized ${compaction.summarizedEntries} entries; its summary mentions ${kept} of ${compaction.facts} facts`,
    );
    for (const fact of compaction.dropped) out.push(`  dropped ${fact.kind}: ${fact.text}${fact.entryId ? c.dim(` (entry ${fact.entryId})`) : ""}`);
  }
  out.push("", c.dim("facts: requests, files changed, open errors, identifiers, constraints and decisions still in force, the open question"));
  return out.join("\n");
}
