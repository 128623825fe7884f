// A second reporter for `npm test` (scripts/test.ts): after the run, one line for each group of
// tests that need a real component, so the output shows they ran rather than being skipped.
// BONSAI_TEST_GROUPS: {"label": {"files": ["/abs/file.test.ts", …]} | {"name": "regex"}}: a test is
// in a group when it is defined in one of the files, or when its name or the name of a suite
// around it matches the pattern.
export default async function* countGroups(source) {
  const groups = Object.entries(JSON.parse(process.env.BONSAI_TEST_GROUPS ?? "{}")).map(([label, g]) => ({
    label,
    files: new Set(g.files ?? []),
    name: g.name ? new RegExp(g.name, "i") : undefined,
    passed: 0,
    failed: 0,
  }));
  const suites = []; // names of the tests started around the current one, by nesting level
  for await (const event of source) {
    const { name, nesting, file, details } = event.data ?? {};
    if (event.type === "test:start") {
      suites.length = nesting;
      suites[nesting] = name;
      continue;
    }
    if ((event.type !== "test:pass" && event.type !== "test:fail") || details?.type === "suite") continue;
    if (event.data.skip || event.data.todo) continue;
    const names = [...suites.slice(0, nesting), name];
    for (const group of groups) {
      if (!group.files.has(file) && !(group.name && names.some((n) => group.name.test(n)))) continue;
      if (event.type === "test:pass") group.passed++;
      else group.failed++;
    }
  }
  for (const { label, passed, failed } of groups) yield `${label}: ${passed} passed, ${failed} failed\n`;
}
