/**
 * What an evaluation ran with, so two reports can be compared or one rerun: the bonsai build, a
 * hash of every prompt the summarizers and the judge were given, the models, the judge's samples
 * and temperature, and a hash of the data (each session's branch, the facts and what must not be
 * stated). Pure functions over what evaluateSummaries already has.
 */
import { createHash } from "node:crypto";
import type { SessionEntry } from "../format/entry-types.js";
import * as branchPrompts from "../prompts/branch.js";
import * as compactionPrompts from "../prompts/compaction.js";
import { answerPrompt, gradePrompt, JUDGE_SYSTEM, probesFor } from "./eval-judge.js";
import { FACT_KINDS } from "./eval-facts.js";

export interface EvalPins {
  /** the bonsai build: its version, and its git commit when the caller knows it */
  bonsai: { version?: string; commit?: string };
  /** sha256 of the summary prompts (src/prompts) and the judge's rubric and probes */
  promptHash: string;
  /** each summarizer's label and the model that answered (its name) */
  summarizers: { label: string; model: string }[];
  judge?: { model: string; samples: number; temperature?: number };
  /** sha256 of every evaluated branch (entries as JSON, in order), the facts and what must not be stated */
  datasetHash: string;
  guard: { verbatimRequests: boolean; coverageCheck: boolean };
  rounds: number;
}

const sha256 = (parts: readonly string[]) => {
  const hash = createHash("sha256");
  for (const part of parts) hash.update(part).update("\0");
  return hash.digest("hex");
};

/** The hash of every prompt text a summarizer or the judge is given, in a stable order. */
export function promptHash(): string {
  // a prompt built by a function is pinned by the function's source
  const texts = Object.entries({ ...compactionPrompts, ...branchPrompts } as Record<string, unknown>)
    .filter(([, text]) => typeof text === "string" || typeof text === "function")
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, text]) => `${name}=${String(text)}`);
  // the judge's two prompts as it is given them, with every probe and the key's wording in them
  const probes = probesFor(FACT_KINDS.map((kind) => ({ kind, text: "" })));
  const judge = [JUDGE_SYSTEM, answerPrompt("{summary}", probes), gradePrompt("{conversation}", {}, probes, { facts: [{ kind: "request", text: "{fact}" }], negatives: [{ text: "{retired}" }] })];
  return sha256([...texts, ...judge]);
}

/** The hash of what was evaluated: the branches, then the facts and negatives, as JSON. */
export function datasetHash(branches: readonly (readonly SessionEntry[])[], known: readonly unknown[]): string {
  return sha256([...branches.map((branch) => JSON.stringify(branch)), JSON.stringify(known)]);
}
