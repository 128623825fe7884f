/**
 * The dialects bonsai reads and writes, by name, and which one a session is in. See types.ts.
 */
import { ompDialect } from "./omp.js";
import { pi1Dialect } from "./pi-1.js";
import { piDialect } from "./pi.js";
import type { Dialect, DialectName } from "./types.js";

export const DIALECTS: Record<DialectName, Dialect> = {
  pi: piDialect,
  "pi-1": pi1Dialect,
  omp: ompDialect,
};

export type { ContextSegments, ContextSettings, Dialect, DialectName } from "./types.js";
export { DialectEvidence, detectDialect, dialectOfEntries } from "./detect.js";
