/**
 * Reading a summary in tests: the items under one heading, and the messages the extractive
 * summarizer's tests build conversations from.
 */
import assert from "node:assert/strict";
import { a, messageOf, tr, u } from "./paths.js";

/** The non-empty lines under `heading` up to the next `##`/`###` heading; "(none)" too unless `skipNone`. */
export function sectionLines(summary: string, heading: string, skipNone = true): string[] {
  const lines = summary.split("\n");
  const start = lines.indexOf(heading);
  assert.ok(start >= 0, `missing ${heading}`);
  const out: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (/^#{2,3} /.test(line)) break;
    if (line.trim() && !(skipNone && line.trim() === "(none)")) out.push(line);
  }
  return out;
}

export const user = (text: string) => messageOf(u(text));
export const say = (text: string, calls?: { name: string; args?: Record<string, unknown> }[]) => messageOf(a(text, calls ? { calls } : {}));
export const result = (text: string, tool = "bash") => messageOf(tr(text, tool));
