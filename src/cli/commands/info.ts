/** `bonsai info FILE`: what a session file holds, at a glance. */
import type { Command } from "commander";
import { estimateTokens } from "../../compaction/tokens.js";
import type { SessionManager } from "../../session/manager.js";
import { isCheckoutMarker } from "../../format/entry-types.js";
import {
  type Colors,
  colors,
  formatBytes,
  formatCount,
  print,
  printJson,
  runAction,
  warn,
} from "../output.js";
import { openSession, storedSize } from "../open-session.js";

export interface SessionInfo {
  file: string;
  sizeBytes: number;
  /** the format version on disk, before any in-memory migration */
  version: number;
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
export function collectInfo(session: SessionManager, file: { path: string; sizeBytes: number; version: number }): SessionInfo {
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
  let estimatedTokens = 0;
  for (const message of context.messages) estimatedTokens += estimateTokens(message);
  const header = session.getHeader();
  return {
    file: file.path,
    sizeBytes: file.sizeBytes,
    version: file.version,
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

const list = (counts: Record<string, number>) =>
  Object.entries(counts)
    .sort(([, a], [, b]) => b - a)
    .map(([key, n]) => `${formatCount(n)} ${key}`)
    .join(", ");

export function formatInfo(info: SessionInfo, c: Colors): string {
  const row = (key: string, value: string) => `${c.dim(key.padEnd(13))}${value}`;
  const messages = info.entries.byType.message ?? 0;
  const others = Object.fromEntries(Object.entries(info.entries.byType).filter(([type]) => type !== "message"));
  const entryLine =
    `${formatCount(info.entries.total)}` +
    (messages ? ` — ${formatCount(messages)} message (${list(info.entries.messagesByRole)})` : "") +
    (Object.keys(others).length ? `${messages ? "," : " —"} ${list(others)}` : "");
  const shownLabels = info.labels.slice(0, 8).map((l) => `${l.id} ${c.cyan(`[${l.label}]`)}`);
  if (info.labels.length > 8) shownLabels.push(`… ${info.labels.length - 8} more`);
  const model = info.context.model ? `${info.context.model.provider}/${info.context.model.modelId}` : "none";
  const lines = [
    `${c.bold(info.file)}`,
    row("format", `v${info.version}${info.version < 3 ? c.yellow(" (older format: read as v3; `bonsai migrate` upgrades the file)") : ""}`),
    row("size", formatBytes(info.sizeBytes)),
    row("session", info.sessionId),
    row("name", info.name ?? c.dim("(none)")),
    row("cwd", info.cwd),
    row("created", info.createdAt),
    row("entries", entryLine),
    row(
      "branches",
      `${formatCount(info.branches.leaves)} ${info.branches.leaves === 1 ? "leaf" : "leaves"}, ` +
        `${formatCount(info.branches.forkPoints)} fork ${info.branches.forkPoints === 1 ? "point" : "points"}`,
    ),
    row("compactions", formatCount(info.compactions)),
    row("branch sums", formatCount(info.branchSummaries)),
    row("labels", info.labels.length ? `${info.labels.length}: ${shownLabels.join(", ")}` : c.dim("(none)")),
    row("leaf", info.leafId ?? c.dim("(before the first entry)")),
    row(
      "context",
      `${formatCount(info.context.messages)} messages, ~${formatCount(info.context.estimatedTokens)} tokens (estimated), ` +
        `thinking ${info.context.thinkingLevel}, model ${model}`,
    ),
    row("load issues", info.loadIssues ? c.yellow(`${info.loadIssues} (see warnings above)`) : "none"),
  ];
  return lines.join("\n");
}

/** Opens read-only and learns the stored version from the migration the open performs in memory. */
export async function openWithVersion(
  path: string,
): Promise<{ session: SessionManager; file: { path: string; sizeBytes: number; version: number } }> {
  let migratedFrom: number | undefined;
  const session = await openSession(path, {
    readOnly: true,
    // an inspection reports every bad line, so every line is parsed and validated
    bodies: "parsed",
    onWarning: warn,
    onMigrate: ({ fromVersion }) => {
      migratedFrom = fromVersion;
    },
  });
  const headerVersion = session.getHeader().version;
  const version = migratedFrom ?? (typeof headerVersion === "number" ? headerVersion : 1);
  return { session, file: { path: session.getLocation() ?? path, sizeBytes: await storedSize(session), version } };
}

export function register(program: Command): void {
  program
    .command("info")
    .description("format version, entries by type, branches, labels and estimated context tokens")
    .argument("<file>", "session file (.jsonl), sqlite:PATH#ID or postgres://…#ID")
    .option("--json", "print stable JSON")
    .action(
      runAction(async (path: string, options: { json?: boolean }) => {
        const { session, file } = await openWithVersion(path);
        const info = collectInfo(session, file);
        if (options.json) printJson(info);
        else print(formatInfo(info, colors()));
      }),
    );
}
