/**
 * What a session holds, at a glance: the report of `bonsai info`. collectInfo is pure over an
 * open session; sessionInfo opens a location the way an inspection must (every line parsed).
 */
import { estimateMessagesTokens } from "../compaction/tokens.js";
import { isCheckoutMarker } from "../format/entry-types.js";
import type { SessionManager } from "../session/manager.js";
import { openSession, type SessionTarget, sessionName, storedSize, type WarningListener, withSession } from "./open-session.js";

export interface SessionInfo {
  file: string;
  sizeBytes: number;
  /** the format version on disk, before any in-memory migration */
  version: number;
  /** whose rule reads it (format/dialects/): "pi" (up to 0.86), "pi-1" (0.87 and later), "omp" (oh-my-pi 18) */
  dialect: string;
  sessionId: string;
  cwd: string;
  name: string | null;
  createdAt: string;
  entries: {
    total: number;
    byType: Record<string, number>;
    messagesByRole: Record<string, number>;
  };
  branches: {
    leaves: number;
    forkPoints: number;
    leafIds: string[];
  };
  compactions: number;
  branchSummaries: number;
  labels: { id: string; label: string }[];
  leafId: string | null;
  context: {
    messages: number;
    estimatedTokens: number;
    thinkingLevel: string;
    model: { provider: string; modelId: string } | null;
  };
  loadIssues: number;
}

/** Where the session is stored, as the report names it. */
export interface StoredSessionFacts {
  path: string;
  sizeBytes: number;
  version: number;
}

function countInto(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

/** Keys sorted, so the JSON of two runs on the same file is byte-identical. */
function sorted(counts: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * Everything `info` reports, from an open session. Leaves and forks ignore bonsai.checkout
 * markers: they record where the leaf was moved, they are not branches the user made.
 */
export function collectInfo(session: SessionManager, file: StoredSessionFacts): SessionInfo {
  const entries = session.getEntries();
  const byType: Record<string, number> = {};
  const byRole: Record<string, number> = {};
  const leafIds: string[] = [];
  const labels: { id: string; label: string }[] = [];
  let forkPoints = 0;
  let compactions = 0;
  let branchSummaries = 0;
  for (const entry of entries) {
    countInto(byType, entry.type);
    if (entry.type === "message") countInto(byRole, entry.message.role);
    else if (entry.type === "compaction") compactions++;
    else if (entry.type === "branch_summary") branchSummaries++;
    const label = session.getLabel(entry.id);
    if (label !== undefined) labels.push({ id: entry.id, label });
    if (isCheckoutMarker(entry)) continue;
    const children = session.getChildren(entry.id).filter((c) => !isCheckoutMarker(c) && c.id !== entry.id).length;
    if (children === 0) leafIds.push(entry.id);
    else if (children > 1) forkPoints++;
  }
  const context = session.buildSessionContext();
  const estimatedTokens = estimateMessagesTokens(context.messages);
  const header = session.getHeader();
  return {
    file: file.path,
    sizeBytes: file.sizeBytes,
    version: file.version,
    dialect: session.getDialect().name,
    sessionId: header.id,
    cwd: header.cwd,
    name: session.getSessionName() ?? null,
    createdAt: header.timestamp,
    entries: { total: entries.length, byType: sorted(byType), messagesByRole: sorted(byRole) },
    branches: { leaves: leafIds.length, forkPoints, leafIds },
    compactions,
    branchSummaries,
    labels,
    leafId: session.getLeafId(),
    context: {
      messages: context.messages.length,
      estimatedTokens,
      thinkingLevel: context.thinkingLevel,
      model: context.model,
    },
    loadIssues: session.getLoadIssues().length,
  };
}

const headerVersion = (session: SessionManager): number => {
  const version = session.getHeader().version;
  return typeof version === "number" ? version : 1;
};

/**
 * The info report of `target`. A location is opened read-only with every line parsed and
 * validated (an inspection reports every bad line to `onWarning`), and its stored version learnt
 * from the migration the open performs in memory. A SessionManager reports its header's version.
 */
export async function sessionInfo(target: SessionTarget, options: { onWarning?: WarningListener } = {}): Promise<SessionInfo> {
  if (typeof target !== "string") {
    return collectInfo(target, { path: sessionName(target), sizeBytes: await storedSize(target), version: headerVersion(target) });
  }
  let migratedFrom: number | undefined;
  const session = await openSession(target, {
    readOnly: true,
    bodies: "parsed",
    ...(options.onWarning ? { onWarning: options.onWarning } : {}),
    onMigrate: ({ fromVersion }) => {
      migratedFrom = fromVersion;
    },
  });
  const opened = { session, owned: true, file: sessionName(session, target) };
  return withSession(opened, async () =>
    collectInfo(session, { path: opened.file, sizeBytes: await storedSize(session), version: migratedFrom ?? headerVersion(session) }),
  );
}
