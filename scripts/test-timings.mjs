// A third reporter for `npm test` (scripts/test.ts): how long each test file's tests took, summed
// over its top-level tests, written as JSON to BONSAI_TEST_TIMINGS at the end of the run. The next
// run starts the longest files first, so that the slowest one does not start last and run alone.
// Prints nothing.
import { writeFileSync } from "node:fs";

export default async function* recordTimings(source) {
  const byFile = {};
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const { nesting, file, details } = event.data ?? {};
    if (nesting !== 0 || !file || typeof details?.duration_ms !== "number") continue;
    // a bundle (scripts/test-bundles.ts) is counted for its .ts file, whose path stays the same
    const source = file.replace(/\/\.([^/]+\.test)\.\d+-\d+\.mjs$/, "/$1.ts");
    byFile[source] = (byFile[source] ?? 0) + details.duration_ms;
  }
  const target = process.env.BONSAI_TEST_TIMINGS;
  if (target) {
    try {
      writeFileSync(target, `${JSON.stringify(byFile)}\n`);
    } catch {
      // a cache only: the next run falls back to the files' order
    }
  }
  yield* [];
}
