/** Part 4 of the example session, after the release: list performance and input validation. */
import { bash, edit, read, type SessionRecorder, write } from "./recorder.js";
import { testRun } from "./workspace.js";

export const TESTS_AFTER_RELEASE = [
  "creates a task",
  "rejects a task without a title",
  "lists tasks a page at a time",
  "walks every page with the cursor",
  "returns no cursor when the last page is exactly full",
  "rejects a bad limit or cursor",
  "sends an ETag and answers 304 while it matches",
  "updates a task",
  "keeps the title when only done changes",
  "deletes a task",
  "admits a burst up to capacity, then answers 429 with Retry-After",
  "refills at the configured rate",
  "cannot be doubled at a minute boundary",
  "keeps a bucket per API key",
  "answers 429 with Retry-After once the bucket is empty",
];

const STORE_TESTS = [
  "pages in creation order even when tasks arrive out of order",
  "continues after a cursor whose task was deleted",
  "keeps the order index in step with deletes",
];

export const ok = (names: string[], seed = 0) => names.map((name, i) => ({ name, ok: true, ms: 1.7 + (((i + seed) * 6.1) % 21) }));

const BENCH = `import { TaskStore } from "../src/store.js";

// 40k tasks, like staging
const store = new TaskStore();
const start = Date.parse("2026-01-01T00:00:00Z");
for (let i = 0; i < 40_000; i++) store.create(\`task \${i}\`, new Date(start + i * 1000));

function time(label: string, fn: () => void, runs = 200): void {
  fn();
  const t0 = performance.now();
  for (let i = 0; i < runs; i++) fn();
  console.log(\`\${label.padEnd(26)} \${((performance.now() - t0) / runs).toFixed(3)} ms/op\`);
}

const middle = store.listPage(200, undefined).nextCursor ?? undefined;
time("first page (limit 50)", () => store.listPage(50));
time("page after a cursor", () => store.listPage(50, middle));
time("create", () => store.create("bench"), 5_000);
`;

const STORE_TEST = `import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TaskStore } from "../src/store.js";

const at = (s: number) => new Date(Date.UTC(2026, 2, 14, 9, 0, s));

describe("TaskStore pages", () => {
  it("pages in creation order even when tasks arrive out of order", () => {
    const store = new TaskStore();
    const late = store.create("late", at(30));
    const early = store.create("early", at(10));
    const middle = store.create("middle", at(20));
    const first = store.listPage(2);
    assert.deepEqual(first.items.map((t) => t.id), [early.id, middle.id]);
    const second = store.listPage(2, first.nextCursor!);
    assert.deepEqual(second.items.map((t) => t.id), [late.id]);
    assert.equal(second.nextCursor, null);
  });

  it("continues after a cursor whose task was deleted", () => {
    const store = new TaskStore();
    const tasks = [0, 1, 2, 3].map((s) => store.create(\`t\${s}\`, at(s)));
    const page = store.listPage(2);
    store.remove(tasks[1].id);
    assert.deepEqual(store.listPage(2, page.nextCursor!).items.map((t) => t.id), [tasks[2].id, tasks[3].id]);
  });

  it("keeps the order index in step with deletes", () => {
    const store = new TaskStore();
    const tasks = [0, 1, 2].map((s) => store.create(\`t\${s}\`, at(s)));
    store.remove(tasks[0].id);
    store.remove(tasks[2].id);
    assert.deepEqual(store.listPage(10).items.map((t) => t.id), [tasks[1].id]);
  });
});
`;

export function listPerformance(r: SessionRecorder): void {
  r.user(
    "0.4.0 is on staging. p95 for `GET /tasks?limit=50` is ~140 ms with 40k tasks and the box is CPU-bound. " +
      "The dashboard polls it every few seconds per open tab. Can you make it fast?",
  );
  r.act({
    thinking:
      "listPage copies and sorts all 40k tasks on every request, with localeCompare, then scans with findIndex. " +
      "That's O(n log n) per page for something that should be O(log n + limit). Measure before changing anything.",
    text: "I have a suspect (`listPage` sorts every task on every request), but let me measure first:",
    calls: [write("bench/list-page.ts", BENCH)],
  });
  r.act({
    calls: [
      bash(
        "node --import tsx bench/list-page.ts",
        "first page (limit 50)      58.912 ms/op\npage after a cursor        61.407 ms/op\ncreate                     0.003 ms/op",
        0,
        26,
      ),
    ],
  });
  r.act({
    thinking:
      "59 ms per page in-process; with JSON and the event loop contention under load, 140 ms p95 is plausible. Fix: keep a " +
      "second index, an array sorted by (createdAt, id), maintained on create (append in the common case, binary insert " +
      "when a clock goes backwards) and remove (binary search + splice). listPage = binary search for the cursor + slice. " +
      "Also drop localeCompare: ISO-8601 strings and UUIDs order correctly by code unit and < is much faster.",
    text:
      "Confirmed: ~59 ms per page, nearly all of it sorting 40k tasks with `localeCompare`. I'll keep the tasks in a second, always-sorted array, so a page is a binary search plus a slice:",
    calls: [read("src/store.ts")],
  });
  r.act({
    calls: [
      edit(
        "src/store.ts",
        [
          "  private tasks = new Map<string, Task>();\n",
          "  private tasks = new Map<string, Task>();\n  /** the same tasks sorted by (createdAt, id), so a page never sorts */\n  private order: Task[] = [];\n",
        ],
        ["    this.tasks.set(task.id, task);\n    return task;\n", "    this.tasks.set(task.id, task);\n    this.order.splice(firstAfter(this.order, task), 0, task);\n    return task;\n"],
        [
          `    const after = cursor ? decodeCursor(cursor) : undefined;
    const sorted = this.list().sort(byCreation);
    const start = after ? sorted.findIndex((t) => byCreation(t, after) > 0) : 0;
    const window = start === -1 ? [] : sorted.slice(start, start + limit + 1);`,
          `    const start = cursor ? firstAfter(this.order, decodeCursor(cursor)) : 0;
    const window = this.order.slice(start, start + limit + 1);`,
        ],
        [
          "  remove(id: string): boolean {\n    return this.tasks.delete(id);\n  }\n",
          "  remove(id: string): boolean {\n    const task = this.tasks.get(id);\n    if (!task) return false;\n    this.tasks.delete(id);\n    this.order.splice(firstAfter(this.order, task) - 1, 1);\n    return true;\n  }\n",
        ],
        [
          "function byCreation(a: CursorKey, b: CursorKey): number {\n  return a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id);\n}\n",
          `function byCreation(a: CursorKey, b: CursorKey): number {
  // ISO timestamps and UUIDs order correctly by code unit; localeCompare is far slower
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Index of the first task that sorts strictly after \`key\` (binary search). */
function firstAfter(order: readonly Task[], key: CursorKey): number {
  let lo = 0;
  let hi = order.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (byCreation(order[mid], key) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
`,
        ],
      ),
    ],
  });
  r.act({
    calls: [
      bash(
        "node --import tsx bench/list-page.ts",
        "first page (limit 50)      0.004 ms/op\npage after a cursor        0.006 ms/op\ncreate                     0.004 ms/op",
        0,
        2.1,
      ),
    ],
  });
  r.act({
    thinking: "Four orders of magnitude. The HTTP tests cover the happy path but not out-of-order inserts or deletes around a cursor, which is where an index like this breaks. Add store-level tests.",
    text: "From ~59 ms to ~5 µs per page. A sorted index can break in ways the HTTP tests don't reach (out-of-order inserts, deletes around a cursor), so I'll add store tests:",
    calls: [write("test/store.test.ts", STORE_TEST)],
  });
  const run = testRun("TaskStore pages", ok([...TESTS_AFTER_RELEASE, ...STORE_TESTS]), 968.1, "0.4.0");
  r.act({ calls: [bash("npm test", run.output, run.exitCode, 3.7)] });
  r.act({ calls: [bash("npm run typecheck && npm run lint", "\n> tasktrack@0.4.0 typecheck\n> tsc --noEmit\n\n\n> tasktrack@0.4.0 lint\n> biome lint src test\n\nChecked 11 files in 8ms. No fixes applied.", 0, 3.8)] });
  r.reply(
    "Fixed the CPU hog: `listPage` no longer sorts. The store keeps a second array of the same tasks sorted by `(createdAt, id)`. `create` inserts at the right place (an append in practice), `remove` splices, and a page is a binary search for the cursor plus a slice. Comparisons use `<` instead of `localeCompare`.\n\n" +
      "| | before | after |\n|---|---|---|\n| first page | 58.9 ms | 0.004 ms |\n| page after a cursor | 61.4 ms | 0.006 ms |\n| create | 0.003 ms | 0.004 ms |\n\n" +
      "New `test/store.test.ts` covers out-of-order inserts and deletes around a cursor. The benchmark is in `bench/list-page.ts` if you want to rerun it.",
  );
}

const VALIDATE = `/** Checks task input from request bodies: the clean value, or the first problem in words. */
export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

export const MAX_TITLE = 200;

export function checkTitle(raw: unknown): Checked<string> {
  if (typeof raw !== "string") return { ok: false, error: "title must be a string" };
  const title = raw.trim();
  if (title.length === 0) return { ok: false, error: "title must not be empty" };
  if (title.length > MAX_TITLE) return { ok: false, error: \`title must be at most \${MAX_TITLE} characters\` };
  return { ok: true, value: title };
}

export function checkPatch(body: unknown): Checked<{ title?: string; done?: boolean }> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { ok: false, error: "body must be a JSON object" };
  }
  const { title, done, ...rest } = body as Record<string, unknown>;
  const unknownFields = Object.keys(rest);
  if (unknownFields.length > 0) return { ok: false, error: \`unknown field: \${unknownFields[0]}\` };
  const patch: { title?: string; done?: boolean } = {};
  if (title !== undefined) {
    const checked = checkTitle(title);
    if (!checked.ok) return checked;
    patch.title = checked.value;
  }
  if (done !== undefined) {
    if (typeof done !== "boolean") return { ok: false, error: "done must be true or false" };
    patch.done = done;
  }
  return { ok: true, value: patch };
}
`;

const VALIDATE_TEST = `import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkPatch, checkTitle, MAX_TITLE } from "../src/validate.js";

describe("input validation", () => {
  it("trims titles and enforces 1-200 characters", () => {
    assert.deepEqual(checkTitle("  ship it "), { ok: true, value: "ship it" });
    assert.equal(checkTitle("   ").ok, false);
    assert.equal(checkTitle("x".repeat(MAX_TITLE)).ok, true);
    assert.deepEqual(checkTitle("x".repeat(MAX_TITLE + 1)), { ok: false, error: "title must be at most 200 characters" });
    assert.deepEqual(checkTitle(42), { ok: false, error: "title must be a string" });
  });

  it("rejects wrong types in a patch, naming the field", () => {
    assert.deepEqual(checkPatch({ done: "yes" }), { ok: false, error: "done must be true or false" });
    assert.deepEqual(checkPatch({ title: "" }), { ok: false, error: "title must not be empty" });
    assert.deepEqual(checkPatch({ owner: "sam" }), { ok: false, error: "unknown field: owner" });
    assert.deepEqual(checkPatch([]), { ok: false, error: "body must be a JSON object" });
  });

  it("rejects a patch that changes nothing", () => {
    assert.deepEqual(checkPatch({}), { ok: false, error: "body must set title or done" });
  });

  it("accepts a valid partial patch", () => {
    assert.deepEqual(checkPatch({ done: true }), { ok: true, value: { done: true } });
  });
});
`;

export function validation(r: SessionRecorder): void {
  r.user(
    "Product wants stricter input: titles trimmed and 1–200 characters, and PATCH should reject wrong types instead of " +
      'silently ignoring them (someone sent `done: "yes"`). Return 400 with a message that names the field.',
  );
  r.act({ calls: [read("src/routes/tasks.ts", 30, 40), read("test/tasks.test.ts", 1, 40)] });
  r.act({
    thinking:
      "Pull the checks out of the route into src/validate.ts as pure functions returning ok/error, so they are unit-testable " +
      "without HTTP. PATCH: reject non-objects, unknown fields, wrong types, and an empty patch (a no-op PATCH that bumps " +
      "updatedAt is surprising). Write the tests first, including the empty patch.",
    text: "I'll move the checks into pure functions in `src/validate.ts` so they can be tested without HTTP. Tests first:",
    calls: [write("test/validate.test.ts", VALIDATE_TEST)],
  });
  r.act({ calls: [write("src/validate.ts", VALIDATE)] });
  r.act({
    calls: [
      edit(
        "src/routes/tasks.ts",
        ['import type { Task } from "../types.js";', 'import type { Task } from "../types.js";\nimport { checkPatch, checkTitle } from "../validate.js";'],
        [
          `      if (typeof body?.title !== "string" || body.title.trim() === "") {
        sendJson(res, 400, { error: "title is required" });
        return true;
      }
      sendJson(res, 201, store.create(body.title.trim()));`,
          `      const title = checkTitle(body?.title);
      if (!title.ok) {
        sendJson(res, 400, { error: title.error });
        return true;
      }
      sendJson(res, 201, store.create(title.value));`,
        ],
        [
          `      const body = (await readJson(req)) as TaskBody | undefined;
      const task = store.update(id, {
        title: typeof body?.title === "string" ? body.title : undefined,
        done: typeof body?.done === "boolean" ? body.done : undefined,
      });`,
          `      const patch = checkPatch(await readJson(req));
      if (!patch.ok) {
        sendJson(res, 400, { error: patch.error });
        return true;
      }
      const task = store.update(id, patch.value);`,
        ],
      ),
    ],
  });
  const validationTests = ["trims titles and enforces 1-200 characters", "rejects wrong types in a patch, naming the field", "rejects a patch that changes nothing", "accepts a valid partial patch"];
  const failingRun = testRun(
    "input validation",
    [
      ...ok(TESTS_AFTER_RELEASE),
      ...ok(STORE_TESTS, 3),
      ...ok(validationTests.slice(0, 2), 5),
      {
        name: validationTests[2],
        ok: false,
        ms: 0.6,
        failure:
          "AssertionError [ERR_ASSERTION]: Expected values to be strictly deep-equal:\n+ actual - expected\n\n  {\n+   ok: true,\n+   value: {}\n-   error: 'body must set title or done',\n-   ok: false\n  }\n\n    at TestContext.<anonymous> (/home/dev/projects/tasktrack/test/validate.test.ts:22:12)",
      },
      ...ok(validationTests.slice(3), 7),
    ],
    1003.4,
    "0.4.0",
  );
  r.act({ calls: [bash("npm test", failingRun.output, failingRun.exitCode, 3.8)] });
  r.act({
    text: "As intended, the empty-patch test fails first. Now the check:",
    calls: [
      edit("src/validate.ts", [
        "  return { ok: true, value: patch };\n}\n",
        '  if (patch.title === undefined && patch.done === undefined) return { ok: false, error: "body must set title or done" };\n  return { ok: true, value: patch };\n}\n',
      ]),
    ],
  });
  const green = testRun("input validation", ok([...TESTS_AFTER_RELEASE, ...STORE_TESTS, ...validationTests]), 991.7, "0.4.0");
  r.act({ calls: [bash("npm test && npm run typecheck", `${green.output}\n\n> tasktrack@0.4.0 typecheck\n> tsc --noEmit\n`, green.exitCode, 6.4)] });
  r.act({
    calls: [
      edit("README.md", [
        "- `GET /tasks/:id`, `PATCH /tasks/:id`, `DELETE /tasks/:id`\n",
        "- `GET /tasks/:id`, `PATCH /tasks/:id`, `DELETE /tasks/:id`\n\nTitles are trimmed and must be 1–200 characters. `PATCH` accepts only `title` (string) and `done` (boolean), at least one of them; anything else is a `400` whose `error` names the field.\n",
      ]),
    ],
  });
  r.reply(
    "Validation is stricter now, and lives in `src/validate.ts` as pure functions:\n\n- titles are trimmed and must be 1–200 characters (POST and PATCH)\n- PATCH rejects non-objects, unknown fields (`unknown field: owner`), wrong types (`done must be true or false`) and an empty patch\n- every rejection is a `400` with an `error` that names the field\n\nUnit tests cover each rule, and the README documents them. `done: \"yes\"` now gets a 400 instead of being silently ignored.",
  );
}

export function doneFilter(r: SessionRecorder): void {
  r.user("The dashboard has an 'open tasks' view. Can GET /tasks take `?done=false` (and `true`), working with the cursor?");
  r.act({ calls: [read("src/store.ts", 1, 45)] });
  r.act({
    thinking:
      "Filter inside listPage while walking the sorted index from the cursor: collect up to limit + 1 matches. The cursor " +
      "stays the last returned task's key, so it remains valid with a filter. Cost: a sparse filter scans more entries; " +
      "worst case a full scan, but no sort. Measure the sparse case in the bench.",
    text:
      "The filter fits the index: walk the sorted tasks from the cursor and collect matches until there is one more than the page. The cursor stays the last returned task's key, so paging with a filter needs nothing new.",
    calls: [
      edit(
        "src/store.ts",
        [
          "  listPage(limit: number, cursor?: string): Page<Task> {\n",
          "  listPage(limit: number, cursor?: string, done?: boolean): Page<Task> {\n",
        ],
        [
          "    const window = this.order.slice(start, start + limit + 1);\n",
          "    const window: Task[] = [];\n    for (let i = start; i < this.order.length && window.length <= limit; i++) {\n      const task = this.order[i];\n      if (done === undefined || task.done === done) window.push(task);\n    }\n",
        ],
      ),
    ],
  });
  r.act({
    calls: [
      edit("src/routes/tasks.ts", [
        `      const cursor = url.searchParams.get("cursor") ?? undefined;
      try {
        sendJson(res, 200, store.listPage(limit, cursor));`,
        `      const doneParam = url.searchParams.get("done");
      if (doneParam !== null && doneParam !== "true" && doneParam !== "false") {
        sendJson(res, 400, { error: "done must be true or false" });
        return true;
      }
      const done = doneParam === null ? undefined : doneParam === "true";
      const cursor = url.searchParams.get("cursor") ?? undefined;
      try {
        sendJson(res, 200, store.listPage(limit, cursor, done));`,
      ]),
    ],
  });
  r.act({
    calls: [
      edit("test/store.test.ts", [
        '  it("keeps the order index in step with deletes", () => {\n',
        `  it("filters by done and pages past tasks that don't match", () => {
    const store = new TaskStore();
    const tasks = [0, 1, 2, 3, 4, 5].map((s) => store.create(\`t\${s}\`, at(s)));
    for (const i of [1, 2, 4]) store.update(tasks[i].id, { done: true });
    const first = store.listPage(2, undefined, false);
    assert.deepEqual(first.items.map((t) => t.id), [tasks[0].id, tasks[3].id]);
    const second = store.listPage(2, first.nextCursor!, false);
    assert.deepEqual(second.items.map((t) => t.id), [tasks[5].id]);
    assert.equal(second.nextCursor, null);
  });

  it("keeps the order index in step with deletes", () => {
`,
      ]),
      edit("bench/list-page.ts", [
        'time("create", () => store.create("bench"), 5_000);\n',
        'for (const [i, task] of store.listPage(200).items.entries()) if (i % 100 === 0) store.update(task.id, { done: true });\ntime("done=true, 1% match", () => store.listPage(50, undefined, true));\ntime("create", () => store.create("bench"), 5_000);\n',
      ]),
    ],
  });
  const run = testRun("TaskStore pages", ok([...TESTS_AFTER_RELEASE, ...STORE_TESTS.slice(0, 2), "filters by done and pages past tasks that don't match", STORE_TESTS[2]], 9), 1021.4, "0.4.0");
  r.act({
    calls: [
      bash("npm test", run.output, run.exitCode, 3.9),
      bash(
        "node --import tsx bench/list-page.ts",
        "first page (limit 50)      0.004 ms/op\npage after a cursor        0.006 ms/op\ndone=true, 1% match        0.012 ms/op\ncreate                     0.004 ms/op",
        0,
        2.2,
      ),
    ],
  });
  r.act({
    thinking: "Only 2 of the 40k tasks are done in the bench, so the page can never collect 51 matches and walks the whole index: 0.012 ms is the full-scan worst case, a loop over 40k booleans. Acceptable; mention it.",
    calls: [
      edit("README.md", [
        "  `limit` is 1–200 (default 50); pass `nextCursor` back as `cursor` until it is `null`.\n",
        "  `limit` is 1–200 (default 50); pass `nextCursor` back as `cursor` until it is `null`.\n  `done=true|false` filters; it combines with the cursor.\n",
      ]),
    ],
  });
  r.reply(
    "`GET /tasks?done=false` (or `true`) works and combines with `limit` and `cursor`. Anything other than `true`/`false` is a 400.\n\n" +
      "The store filters while walking its sorted index, so there's still no sort per request. A very selective filter scans more: the bench's worst case (2 matches among 40k tasks, so a full scan) is 0.012 ms. There's a store test for paging past non-matching tasks, and the README documents the parameter.",
  );
}
