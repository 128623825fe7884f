/**
 * What SessionManager.createBranchedSession writes: a new header and the root-to-leaf path alone,
 * with the labels on it re-created after it.
 */
import type { LabelEntry, SessionEntry, SessionHeader } from "../format/entry-types.js";
import { stampEntry } from "./new-entries.js";
import { newHeader } from "./opening.js";

export function branchedSession(
  path: readonly SessionEntry[],
  labelOf: (id: string) => string | undefined,
  cwd: string,
  parentSession: string | undefined,
): { header: SessionHeader; entries: SessionEntry[] } {
  const kept = chainPath(path.filter((e) => e.type !== "label"));
  const keptIds = new Set(kept.map((e) => e.id));
  const header = newHeader(cwd);
  if (parentSession) header.parentSession = parentSession;
  const labels: LabelEntry[] = [];
  let parentId = kept[kept.length - 1]?.id ?? null;
  for (const entry of kept) {
    const label = labelOf(entry.id);
    if (label === undefined) continue;
    const stamped = stampEntry<LabelEntry>({ type: "label", targetId: entry.id, label }, parentId, keptIds);
    keptIds.add(stamped.id);
    labels.push(stamped);
    parentId = stamped.id;
  }
  return { header, entries: [...kept, ...labels] };
}

/**
 * Re-links a root-first path whose label entries were taken out: an entry that hung off a dropped
 * label would otherwise point at a parent that is not in the new session, and cut its context short.
 */
function chainPath(path: readonly SessionEntry[]): SessionEntry[] {
  return path.map((entry, i) => {
    if (i === 0 || entry.parentId === path[i - 1].id) return entry;
    return { ...entry, parentId: path[i - 1].id };
  });
}
