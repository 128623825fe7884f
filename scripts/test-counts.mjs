// The second reporter of `npm test` (scripts/test.ts), beside the spec reporter. One reporter for
// two jobs, as each reporter adds listeners to the runner's stream and three pass node's limit:
//
// 1. After the run, one line for each group of tests that need a real component, so the output
//    shows they ran rather than being skipped. BONSAI_TEST_GROUPS: {"label": {"files": ["/abs/
//    file.test.ts", …]} | {"name": "regex"}}: a test is in a group when it is defined in one of
//    the files, or when its name or the name of a suite around it matches the pattern.
// 2. How long each test file's top-level tests took, written as JSON to BONSAI_TEST_TIMINGS, so
//    that the next run starts the longest files first (the slowest must not start last and run
//    alone). A bundle (scripts/test-bundles.ts) counts for its .ts file, whose path stays the same;
//    a folder's shared bundle counts for `<folder>/<name>-files.test.ts`, a key and not a file.
import { writeFileSync } from "node:fs";

/**
 * The path a test file's time is recorded under: a bundle's (`dir/.name.test.<run>.mjs`) is its
 * .ts file's (`dir/name.test.ts`), a folder's shared bundle's a key that is no file
 * (`dir/<folder>-files.test.ts`); any other path is its own. scripts/test.ts orders by it.
 * @param {string} file
 * @returns {string}
 */
export function timingKey(file) {
  return file.replace(/\/\.([^/]+\.test)\.\d+-\d+\.mjs$/, "/$1.ts");
}

export default async function* countGroups(source) {
  const groups = Object.entries(JSON.parse(process.env.BONSAI_TEST_GROUPS ?? "{}")).map(([label, g]) => ({
    label,
    files: new Set(g.files ?? []),
    name: g.name ? new RegExp(g.name, "i") : undefined,
    passed: 0,
    failed: 0,
  }));
  const timings = {};
  const suites = []; // names of the tests started around the current one, by nesting level
  for await (const event of source) {
    const { name, nesting, file, details } = event.data ?? {};
    if (event.type === "test:start") {
      suites.length = nesting;
      suites[nesting] = name;
      continue;
    }
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    if (nesting === 0 && file && typeof details?.duration_ms === "number") {
      const source = timingKey(file);
      timings[source] = (timings[source] ?? 0) + details.duration_ms;
    }
    if (details?.type === "suite") continue;
    if (event.data.skip || event.data.todo) continue;
    const names = [...suites.slice(0, nesting), name];
    for (const group of groups) {
      if (!group.files.has(file) && !(group.name && names.some((n) => group.name.test(n)))) continue;
      if (event.type === "test:pass") group.passed++;
      else group.failed++;
    }
  }
  if (process.env.BONSAI_TEST_TIMINGS) {
    try {
      writeFileSync(process.env.BONSAI_TEST_TIMINGS, `${JSON.stringify(timings)}\n`);
    } catch {
      // a cache only: the next run falls back to the files' order
    }
  }
  for (const { label, passed, failed } of groups) yield `${label}: ${passed} passed, ${failed} failed\n`;
}
