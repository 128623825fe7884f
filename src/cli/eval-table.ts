/**
 * The terminal side of `bonsai eval`: the results table (one row per session and summarizer,
 * the first and the last round side by side) and a progress bar drawn on a terminal only.
 */
import { isAbsolute, relative } from "node:path";
import type { EvalReport, RoundScore } from "../ops/eval.js";
import { DIMENSIONS } from "../ops/eval-judge.js";
import type { Colors } from "./output.js";

/** A file under the working directory by its relative path; anything else (a database location) as it is. */
function shortName(file: string): string {
  if (!isAbsolute(file)) return file;
  const rel = relative(process.cwd(), file);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : file;
}

const percent = (x: number) => `${(x * 100).toFixed(1)}%`;
const ms = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(1)} s` : `${Math.round(x)} ms`);
const mean = (values: readonly number[]) => (values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length);

/** The judge's mean over its dimensions and rounds, with the widest spread of its samples when it sampled more than once. */
function judgeCell(rounds: readonly RoundScore[]): string {
  const judged = rounds.flatMap((r) => (r.judge ? [r.judge] : []));
  if (judged.length === 0) return "-";
  const score = mean(judged.map((j) => mean(DIMENSIONS.map((d) => j.scores[d])))).toFixed(1);
  const widest = Math.max(...judged.flatMap((j) => DIMENSIONS.map((d) => j.spread[d][1] - j.spread[d][0])));
  return judged.some((j) => j.samples.length > 1) ? `${score} ±${(widest / 2).toFixed(1)}` : score;
}

function pad(rows: readonly string[][]): string[] {
  const widths = rows[0].map((_, col) => Math.max(...rows.map((row) => [...row[col]].length)));
  return rows.map((row) => row.map((cell, col) => (col < 2 ? cell.padEnd(widths[col]) : cell.padStart(widths[col]))).join("  "));
}

/** The lost facts shown under the table: the first three, and how many more were lost. */
export function lostFactLines(summarizer: string, lost: readonly { kind: string; text: string }[], shown = 3): string[] {
  const lines = lost.slice(0, shown).map((fact) => `${summarizer} lost ${fact.kind}: ${fact.text.replace(/\s+/g, " ").slice(0, 100)}`);
  if (lost.length > shown) lines.push(`${summarizer} lost ${lost.length - shown} more (see --json)`);
  return lines;
}

/** Negative facts stated as current over all rounds, with the raw text's count beside it. */
function wrongCell(rounds: readonly RoundScore[]): string {
  const all = rounds.reduce((n, r) => n + r.wrong.count, 0);
  const raw = rounds.reduce((n, r) => n + r.wrong.raw, 0);
  return `${all} (${raw})`;
}

export function formatEvalTable(report: EvalReport, c: Colors): string {
  const rows: string[][] = [
    ["session", "summarizer", "kept r1", `kept r${report.rounds}`, `raw r${report.rounds}`, "facts", "wrong", "tokens", "growth", "compression", "coverage+", "time", "cost", "judge"],
  ];
  const errors: string[] = [];
  const missing: string[] = [];
  for (const session of report.sessions) {
    for (const result of session.results) {
      const first = result.rounds[0];
      const last = result.rounds[result.rounds.length - 1];
      const name = shortName(session.file);
      if (result.error) errors.push(`${name} ${result.summarizer}: ${result.error}`);
      if (!first || !last) {
        rows.push([name, result.summarizer, ...Array.from({ length: 12 }, () => "-")]);
        continue;
      }
      rows.push([
        name,
        result.summarizer,
        percent(first.retention),
        `${percent(last.retention)}${result.rounds.length < report.rounds ? ` (r${last.round})` : ""}`,
        percent(last.raw.retention),
        `${last.found}/${last.facts}`,
        wrongCell(result.rounds),
        `${first.summaryTokens}→${last.summaryTokens}`,
        `${last.growth.toFixed(2)}x`,
        `${mean(result.rounds.map((r) => r.compression)).toFixed(1)}x`,
        String(result.rounds.reduce((n, r) => n + r.coverageAdded, 0)),
        ms(mean(result.rounds.map((r) => r.ms))),
        `$${result.rounds.reduce((n, r) => n + r.costUsd, 0).toFixed(4)}`,
        judgeCell(result.rounds),
      ]);
      missing.push(...lostFactLines(result.summarizer, last.missing));
    }
  }
  const [header, ...body] = pad(rows);
  const lines = [c.bold(header), ...body];
  if (report.sessions.some((s) => s.results.some((r) => r.rounds.length < report.rounds && !r.error))) {
    lines.push("", c.dim("(rN): the branch allowed only N rounds"));
  }
  lines.push(
    "",
    c.dim("kept: share of the span's facts (files, identifiers, errors, constraints, decisions, request, question) found in the summary"),
    c.dim("raw: the same in the summarizer's own text, without the file lists and the sections bonsai appends"),
    c.dim("wrong: things --facts says must not be stated as current that a summary states, over all rounds (raw text in parentheses)"),
    c.dim("tokens, growth: summary tokens in round 1 and the last round; time and cost: per compaction; coverage+: facts the coverage check appended"),
  );
  if (missing.length > 0) lines.push("", ...missing.map((m) => c.dim(m)));
  if (errors.length > 0) lines.push("", ...errors.map((e) => c.red(`error: ${e}`)));
  return lines.join("\n");
}

/** A progress bar on stderr when it is a terminal; nothing at all otherwise. */
export function progressBar(stream: NodeJS.WriteStream = process.stderr): {
  update: (done: number, total: number, label: string) => void;
  done: () => void;
} {
  if (!stream.isTTY) return { update: () => {}, done: () => {} };
  let drawn = false;
  return {
    update(done, total, label) {
      const width = 24;
      const filled = total > 0 ? Math.round((done / total) * width) : 0;
      const line = `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total} ${label}`;
      stream.write(`\r\x1b[2K${line.slice(0, (stream.columns ?? 80) - 1)}`);
      drawn = true;
    },
    done() {
      if (drawn) stream.write("\r\x1b[2K");
    },
  };
}
