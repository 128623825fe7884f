/** `bonsai info FILE`: what a session file holds, at a glance (the report is ops/info.ts's). */
import type { Command } from "commander";
import { type SessionInfo, sessionInfo } from "../../ops/info.js";
import { type Colors, formatBytes, formatCount, warn } from "../output.js";
import { registerReportCommand } from "../report-command.js";
import { DIALECTS, type DialectName } from "../../format/dialects/index.js";

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
    row("dialect", `${info.dialect} ${c.dim(`— read as ${DIALECTS[info.dialect as DialectName]?.writtenBy ?? info.dialect} reads it`)}`),
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

export function register(program: Command): void {
  registerReportCommand(program, {
    name: "info",
    description: "format version, entries by type, branches, labels and estimated context tokens",
    run: (path) => sessionInfo(path, { onWarning: warn }),
    format: (info, _path, c) => formatInfo(info, c),
  });
}
