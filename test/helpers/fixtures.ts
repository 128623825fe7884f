/** Locations of the fixtures in test/fixtures/ (see its README); tests read them in place and never write them. */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const FIXTURES_DIR = resolve(import.meta.dirname, "../fixtures");
export const CONFORMANCE_DIR = join(FIXTURES_DIR, "conformance");
export const REAL_DIR = join(FIXTURES_DIR, "real");
export const REAL_SESSION = join(REAL_DIR, "pi-large-session.v1.jsonl");

export function conformanceCases(): { name: string; file: string; golden: ConformanceGolden }[] {
  if (!existsSync(CONFORMANCE_DIR)) throw new Error(`conformance fixtures missing at ${CONFORMANCE_DIR}`);
  return readdirSync(CONFORMANCE_DIR)
    .filter((f) => f.endsWith(".jsonl"))
    .sort((a, b) => Number.parseInt(a.slice(5), 10) - Number.parseInt(b.slice(5), 10))
    .map((f) => ({
      name: f.replace(/\.jsonl$/, ""),
      file: join(CONFORMANCE_DIR, f),
      golden: JSON.parse(readFileSync(join(CONFORMANCE_DIR, f.replace(/\.jsonl$/, ".golden.json")), "utf8")),
    }));
}

export function realGolden(): RealGolden {
  return JSON.parse(readFileSync(join(REAL_DIR, "pi-large-session.v1.golden.json"), "utf8"));
}

export interface GoldenCut {
  leafId?: string;
  boundaryStart: number;
  keepRecentTokens: number;
  firstKeptEntryIndex: number;
  firstKeptEntryId?: string;
  turnStartIndex: number;
  isSplitTurn: boolean;
  cutAtNonMessageEntry?: boolean;
  noCutPointAfterBudget: boolean;
  lastValidCutIndex: number;
}

export interface ConformanceGolden {
  entryCount: number;
  leafId: string;
  contexts: { leafId: string; thinkingLevel: string; model: unknown; messages: unknown[] }[];
  tree: { id: string; parentId: string | null; children: string[]; label: string | null }[];
  cuts: GoldenCut[];
  estimates: number[];
  branchSummaries: {
    oldLeafId: string;
    targetId: string;
    commonAncestorId: string | null;
    entryIds: string[];
    budgets: { budget: number; messageCount: number; totalTokens: number; readFiles: string[]; modifiedFiles: string[] }[];
  }[];
}

export interface RealGolden {
  entryCount: number;
  branchLength: number;
  entryTypes: string[];
  thinkingLevel: string;
  model: unknown;
  messages: unknown[];
  estimates: number[];
  cuts: GoldenCut[];
}
