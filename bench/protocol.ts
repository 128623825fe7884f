/** What the bench parent and its workers say to each other. */

export const OPS = [
  "open",
  "fullParse",
  "context",
  "tree",
  "branch",
  "cutPoint",
  "branchCut",
  "prepare",
  "prune",
  "collect",
  "append",
  "appendFsync",
  "turn",
] as const;
export type OpName = (typeof OPS)[number];

export interface WorkerTask {
  /** bonsai-trusted: bonsai opened with bodies: "trusted" */
  lib: "bonsai" | "bonsai-trusted" | "reference";
  file: string;
  tmpDir: string;
  reps: number;
  /** stop repeating an operation once its runs took this long in total (one run always happens) */
  capMs: number;
  ops: OpName[];
  appendCount: number;
  fsyncAppendCount: number;
  /** turns (append one message, build the new leaf's context) to run, and a time cap for them all */
  turnCount: number;
  turnCapMs: number;
  /** time read operations warm as well (bonsai and the reference; the trusted open needs no warm rows) */
  warm: boolean;
  /** the entry collect navigates to; found from the session when the file has no stable ids */
  collectTarget?: string;
}

/** Read operations whose cold median is below this are timed warm as well (both libraries, each by its own median). */
export const WARM_BELOW_MS = 5;

/**
 * A read operation timed warm: after its cold runs, called repeatedly until the JIT has settled,
 * then a batch timed as a whole, no GC between calls (what an agent calling it every turn sees).
 */
export interface WarmResult {
  warmupCalls: number;
  warmupMs: number;
  /** calls in the timed batch and its total time; msPerCall = totalMs / calls */
  calls: number;
  totalMs: number;
  msPerCall: number;
}

export type WorkerEvent =
  | { event: "start"; op: OpName }
  | { event: "warm"; op: OpName; warm: WarmResult }
  | { event: "result"; op: OpName; ms: number[]; extra?: Record<string, number | string> }
  | { event: "skip"; op: OpName; reason: string }
  | { event: "error"; op: OpName; message: string }
  | { event: "memory"; baselineMaxRssMb: number; openPeakRssMb: number; retainedMb: number }
  | { event: "done"; peakRssMb: number };

