/**
 * Walking parent links. Every walk is guarded: a cycle (an entry that is its own ancestor) or a
 * parent id that does not exist ends the walk where it is, and the optional `onProblem` callback
 * hears about it once, instead of looping forever like the reference does.
 */
import type { SessionEntry } from "./entry-types.js";

export type PathProblem =
  | { kind: "cycle"; entryId: string }
  | { kind: "missing-parent"; entryId: string; parentId: string };

export type EntryLookup = (id: string) => SessionEntry | undefined;

/** The entries from the root down to `leaf`, root first. */
export function pathToRoot(
  leaf: SessionEntry | undefined,
  lookup: EntryLookup,
  onProblem?: (problem: PathProblem) => void,
): SessionEntry[] {
  const path: SessionEntry[] = [];
  const seen = new Set<string>();
  let current = leaf;
  while (current) {
    if (seen.has(current.id)) {
      onProblem?.({ kind: "cycle", entryId: current.id });
      break;
    }
    seen.add(current.id);
    path.push(current);
    const parentId = current.parentId;
    if (!parentId) break;
    const parent = lookup(parentId);
    if (!parent) {
      onProblem?.({ kind: "missing-parent", entryId: current.id, parentId });
      break;
    }
    current = parent;
  }
  return path.reverse();
}

export function describePathProblem(problem: PathProblem): string {
  return problem.kind === "cycle"
    ? `parent links of entry ${problem.entryId} form a cycle; the path stops there`
    : `entry ${problem.entryId} points at missing parent ${problem.parentId}; treated as a root`;
}
