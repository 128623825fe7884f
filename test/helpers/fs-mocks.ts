/**
 * node:fs mocked for a test (a full disk, a racing writer): the CommonJS module object whose
 * methods `mock.method` replaces, and `whileMocked`, which makes those replacements seen by the
 * ESM imports of the code under test and takes every mock away after, also when `run` throws.
 */
import { createRequire, syncBuiltinESMExports } from "node:module";
import { mock } from "node:test";

export const cjsFs = createRequire(import.meta.url)("node:fs") as typeof import("node:fs");

/** The error a write gets on a full disk. */
export const fullDisk = () => Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });

const restore = () => {
  mock.restoreAll();
  syncBuiltinESMExports();
};

/** Runs `run` (sync or async) with the mocks set up before it, and restores node:fs after it. */
export function whileMocked<T>(run: () => T): T {
  syncBuiltinESMExports();
  let result: T;
  try {
    result = run();
  } catch (error) {
    restore();
    throw error;
  }
  if (result instanceof Promise) return result.finally(restore) as T;
  restore();
  return result;
}
