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
  /** the entry collect navigates to; found from the session when the file has no stable ids */
  collectTarget?: string;
}

export type WorkerEvent =
  | { event: "start"; op: OpName }
  | { event: "result"; op: OpName; ms: number[]; extra?: Record<string, number | string> }
  | { event: "skip"; op: OpName; reason: string }
  | { event: "error"; op: OpName; message: string }
  | { event: "memory"; baselineMaxRssMb: number; openPeakRssMb: number; retainedMb: number }
  | { event: "done"; peakRssMb: number };

