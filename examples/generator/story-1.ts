/** Part 1 of the example session: cursor pagination, then a lint clean-up. */
import { bash, edit, failing, read, type SessionRecorder } from "./recorder.js";
import { testRun } from "./workspace.js";

export const BASE_TESTS = ["creates a task", "rejects a task without a title", "updates a task", "deletes a task"];

export function pagination(r: SessionRecorder): { labeled: string } {
  r.user(
    "GET /tasks returns every task in one response and the dashboard is choking now that staging has ~40k tasks. " +
      "Can you add cursor-based pagination? `?limit=` (default 50, max 200) and `?cursor=`, response shape " +
      "`{ items, nextCursor }`. Leave the other endpoints alone.",
  );
  r.act({
    thinking: "Start by getting the lay of the land: project layout, scripts, how routes are wired.",
    text: "Let me look at the project first.",
    calls: [bash("ls -la && find src test -type f | sort", (ws) => `total 48
drwxr-xr-x  6 dev dev 4096 Mar 14 09:58 .
drwxr-xr-x 14 dev dev 4096 Mar  2 17:21 ..
drwxr-xr-x  8 dev dev 4096 Mar 14 09:58 .git
-rw-r--r--  1 dev dev   23 Feb 11 10:02 .gitignore
-rw-r--r--  1 dev dev  412 Feb 27 16:40 README.md
drwxr-xr-x 96 dev dev 4096 Feb 27 16:41 node_modules
-rw-r--r--  1 dev dev 48211 Feb 27 16:41 package-lock.json
-rw-r--r--  1 dev dev  436 Feb 27 16:40 package.json
drwxr-xr-x  3 dev dev 4096 Feb 27 16:40 src
drwxr-xr-x  2 dev dev 4096 Feb 27 16:40 test
-rw-r--r--  1 dev dev  201 Feb 11 10:02 tsconfig.json
${ws.list("src").replaceAll("./", "")}
${ws.list("test").replaceAll("./", "")}`)],
  });
  r.act({ calls: [read("package.json"), read("src/routes/tasks.ts")] });
  r.act({ calls: [read("src/store.ts"), read("src/types.ts")] });
  r.act({
    thinking:
      "The store is a Map, iterated in insertion order, which is creation order as long as nobody re-inserts. " +
      "An offset cursor would skip or repeat items when tasks are deleted between page requests. A keyset cursor on " +
      "(createdAt, id) is stable: encode the last item's key, next page starts strictly after it. Make it opaque " +
      "(base64url of JSON) so clients don't build it themselves. Sorting 40k items per request is fine for now; the " +
      "store is in memory anyway. Add a Page<T> type first.",
    text:
      "Plan: a keyset cursor. The cursor is an opaque base64url token of the last task's `(createdAt, id)`, and the " +
      "next page starts strictly after it, so deleting tasks between requests never skips or repeats one.",
    calls: [
      edit("src/types.ts", [
        "  updatedAt: string;\n}\n",
        "  updatedAt: string;\n}\n\n/** One page of a list; `nextCursor` is null on the last page. */\nexport interface Page<T> {\n  items: T[];\n  nextCursor: string | null;\n}\n",
      ]),
    ],
  });
  r.act({
    calls: [
      edit(
        "src/store.ts",
        ['import type { Task } from "./types.js";', 'import type { Page, Task } from "./types.js";'],
        [
          "  list(): Task[] {\n    return [...this.tasks.values()];\n  }\n",
          `  list(): Task[] {
    return [...this.tasks.values()];
  }

  /**
   * Tasks in creation order, \`limit\` at a time. The cursor encodes the last task's
   * (createdAt, id), so deleting tasks between requests never skips or repeats one.
   */
  listPage(limit: number, cursor?: string): Page<Task> {
    const after = cursor ? decodeCursor(cursor) : undefined;
    const sorted = this.list().sort(byCreation);
    const start = after ? sorted.findIndex((t) => byCreation(t, after) > 0) : 0;
    const items = start === -1 ? [] : sorted.slice(start, start + limit);
    const nextCursor = items.length === limit ? encodeCursor(items[items.length - 1]) : null;
    return { items, nextCursor };
  }
`,
        ],
        [
          "    return this.tasks.delete(id);\n  }\n}\n",
          `    return this.tasks.delete(id);
  }
}

type CursorKey = Pick<Task, "createdAt" | "id">;

function byCreation(a: CursorKey, b: CursorKey): number {
  return a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id);
}

export function encodeCursor(task: CursorKey): string {
  return Buffer.from(JSON.stringify([task.createdAt, task.id])).toString("base64url");
}

export function decodeCursor(cursor: string): CursorKey {
  const [createdAt, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  if (typeof createdAt !== "string" || typeof id !== "string") throw new Error("invalid cursor");
  return { createdAt, id };
}
`,
        ],
      ),
    ],
  });
  r.act({
    text: "Now the route: parse and validate `limit`, pass the cursor through, and answer 400 for a cursor that does not decode.",
    calls: [
      edit(
        "src/routes/tasks.ts",
        [
          "      sendJson(res, 200, store.list());\n      return true;\n",
          `      const limit = parseLimit(url.searchParams.get("limit"));
      if (limit === undefined) {
        sendJson(res, 400, { error: \`limit must be an integer from 1 to \${MAX_LIMIT}\` });
        return true;
      }
      const cursor = url.searchParams.get("cursor") ?? undefined;
      try {
        sendJson(res, 200, store.listPage(limit, cursor));
      } catch {
        sendJson(res, 400, { error: "invalid cursor" });
      }
      return true;
`,
        ],
        [
          "    return false;\n  };\n}\n",
          `    return false;
  };
}

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 200;

function parseLimit(raw: string | null): number | undefined {
  if (raw === null) return DEFAULT_LIMIT;
  const n = Number(raw);
  return Number.isInteger(n) && n >= 1 && n <= MAX_LIMIT ? n : undefined;
}
`,
        ],
      ),
    ],
  });
  r.act({ calls: [bash("npm run typecheck", "\n> tasktrack@0.3.2 typecheck\n> tsc --noEmit\n", 0, 2.8)] });
  const firstRun = testRun(
    "tasks API",
    [
      { name: "creates a task", ok: true, ms: 31.2 },
      { name: "rejects a task without a title", ok: true, ms: 3.9 },
      {
        name: "lists tasks",
        ok: false,
        ms: 4.4,
        failure:
          "AssertionError [ERR_ASSERTION]: The expression evaluated to a falsy value:\n\n  assert.ok(Array.isArray(await res.json()))\n\n    at TestContext.<anonymous> (/home/dev/projects/tasktrack/test/tasks.test.ts:31:12)",
      },
      { name: "updates a task", ok: true, ms: 6.1 },
      { name: "deletes a task", ok: true, ms: 4.7 },
    ],
    702.5,
  );
  r.act({ calls: [bash("npm test", firstRun.output, firstRun.exitCode, 3.1)] });
  r.act({ calls: [read("test/tasks.test.ts")] });
  r.act({
    thinking: "Expected: that test asserts the old array shape. Update it to the page shape and add real pagination tests: walking all pages, the exactly-full last page edge case, validation.",
    text: "The only failure is the old test that expects a bare array. I'll update it and add tests for walking the pages, the exactly-full last page, and bad input.",
    calls: [
      edit("test/tasks.test.ts", [
        `  it("lists tasks", async () => {
    const res = await fetch(\`\${base}/tasks\`);
    assert.equal(res.status, 200);
    assert.ok(Array.isArray(await res.json()));
  });
`,
        `  it("lists tasks a page at a time", async () => {
    const res = await fetch(\`\${base}/tasks?limit=1\`);
    assert.equal(res.status, 200);
    const page = await res.json();
    assert.equal(page.items.length, 1);
    assert.equal(typeof page.nextCursor, "string");
  });

  it("walks every page with the cursor", async () => {
    for (let i = 0; i < 5; i++) {
      await fetch(\`\${base}/tasks\`, { method: "POST", body: JSON.stringify({ title: \`page test \${i}\` }) });
    }
    const all = (await (await fetch(\`\${base}/tasks?limit=200\`)).json()).items;
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? \`limit=2&cursor=\${cursor}\` : "limit=2";
      const page = await (await fetch(\`\${base}/tasks?\${query}\`)).json();
      seen.push(...page.items.map((t: { id: string }) => t.id));
      cursor = page.nextCursor;
    } while (cursor);
    assert.deepEqual(seen, all.map((t: { id: string }) => t.id));
  });

  it("returns no cursor when the last page is exactly full", async () => {
    const total = (await (await fetch(\`\${base}/tasks?limit=200\`)).json()).items.length;
    const page = await (await fetch(\`\${base}/tasks?limit=\${total}\`)).json();
    assert.equal(page.items.length, total);
    assert.equal(page.nextCursor, null);
  });

  it("rejects a bad limit or cursor", async () => {
    assert.equal((await fetch(\`\${base}/tasks?limit=0\`)).status, 400);
    assert.equal((await fetch(\`\${base}/tasks?limit=500\`)).status, 400);
    assert.equal((await fetch(\`\${base}/tasks?cursor=not-a-cursor\`)).status, 400);
  });
`,
      ]),
    ],
  });
  const pageTests = ["lists tasks a page at a time", "walks every page with the cursor", "returns no cursor when the last page is exactly full", "rejects a bad limit or cursor"];
  const secondRun = testRun(
    "tasks API",
    [
      { name: "creates a task", ok: true, ms: 29.8 },
      { name: "rejects a task without a title", ok: true, ms: 3.6 },
      { name: pageTests[0], ok: true, ms: 4.9 },
      { name: pageTests[1], ok: true, ms: 22.3 },
      {
        name: pageTests[2],
        ok: false,
        ms: 5.2,
        failure:
          "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n+ actual - expected\n\n+ 'WyIyMDI2LTAzLTE0VDA5OjU5OjU4LjExMloiLCJlNGIzZDJmMS05YjI0LTRmMzYtOGM2Ny0yYjYxYTk3ZDk5MjAiXQ'\n- null\n\n    at TestContext.<anonymous> (/home/dev/projects/tasktrack/test/tasks.test.ts:56:12)",
      },
      { name: pageTests[3], ok: true, ms: 6.6 },
      { name: "updates a task", ok: true, ms: 5.8 },
      { name: "deletes a task", ok: true, ms: 4.1 },
    ],
    741.9,
  );
  r.act({ calls: [bash("npm test", secondRun.output, secondRun.exitCode, 3.2)] });
  r.act({
    thinking:
      "Off by one: a full page does not mean there is a next page. When the remaining tasks equal the limit exactly I still hand out a cursor, and the client gets an empty page. Take limit + 1 and only return a cursor if the extra one exists.",
    text: "Real bug, caught by the new test: a full page does not prove there is another one. I'll fetch one extra task to decide.",
    calls: [
      edit("src/store.ts", [
        `    const items = start === -1 ? [] : sorted.slice(start, start + limit);
    const nextCursor = items.length === limit ? encodeCursor(items[items.length - 1]) : null;`,
        `    const window = start === -1 ? [] : sorted.slice(start, start + limit + 1);
    const items = window.slice(0, limit);
    const nextCursor = window.length > limit ? encodeCursor(items[items.length - 1]) : null;`,
      ]),
    ],
  });
  const green = testRun(
    "tasks API",
    ["creates a task", "rejects a task without a title", ...pageTests, "updates a task", "deletes a task"].map((name, i) => ({ name, ok: true, ms: 3 + ((i * 7.3) % 20) })),
    688.4,
  );
  r.act({ calls: [bash("npm test", green.output, green.exitCode, 3)] });
  r.act({
    text: "All green. Let me document the new parameters.",
    calls: [
      edit("README.md", [
        "- `GET /tasks` — all tasks\n",
        "- `GET /tasks?limit=50&cursor=…` — tasks in creation order, a page at a time: `{ items, nextCursor }`.\n  `limit` is 1–200 (default 50); pass `nextCursor` back as `cursor` until it is `null`.\n",
      ]),
    ],
  });
  const labeled = r.reply(
    `Pagination is in.

- \`GET /tasks\` now returns \`{ items, nextCursor }\`; \`limit\` defaults to 50 and is capped at 200 (400 outside 1–200).
- The cursor is an opaque base64url token of the last task's \`(createdAt, id)\`. The next page starts strictly after it, so deletes between requests don't shift pages the way an offset would.
- The new test caught an off-by-one: a page that is exactly full used to return a cursor to an empty page. The store now looks one task ahead.
- README documents the parameters.

**Heads-up:** this is a breaking change for anything that expects a bare array from \`GET /tasks\`. The dashboard needs to read \`.items\`.`,
  );
  return { labeled };
}

export function lint(r: SessionRecorder): void {
  r.user("Nice. `npm run lint` shows a warning about `any` in http.ts. Can you clean that up too?");
  r.act({
    calls: [
      bash(
        "npm run lint",
        `
> tasktrack@0.3.2 lint
> biome lint src test

src/http.ts:3:58 lint/suspicious/noExplicitAny ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━

  ! Unexpected any. Specify a different type.

    1 │ import type { IncomingMessage, ServerResponse } from "node:http";
    2 │
  > 3 │ export async function readJson(req: IncomingMessage): Promise<any> {
      │                                                          ^^^
    4 │   let body = "";
    5 │   for await (const chunk of req) body += chunk;

  i any disables many type checking rules. Its use should be avoided.

Checked 7 files in 6ms. No fixes applied.
Found 1 warning.`,
        0,
        1.1,
      ),
    ],
  });
  r.act({
    thinking: "readJson should return unknown; callers then narrow. Both POST and PATCH read `body?.title`; with unknown they need a shape. A small type for the body keeps it honest.",
    calls: [edit("src/http.ts", ["Promise<any>", "Promise<unknown>"])],
  });
  r.act({
    calls: [
      bash(
        "npm run typecheck",
        `
> tasktrack@0.3.2 typecheck
> tsc --noEmit

src/routes/tasks.ts(24,19): error TS18046: 'body' is of type 'unknown'.
src/routes/tasks.ts(24,58): error TS18046: 'body' is of type 'unknown'.
src/routes/tasks.ts(28,39): error TS18046: 'body' is of type 'unknown'.
src/routes/tasks.ts(42,44): error TS18046: 'body' is of type 'unknown'.
src/routes/tasks.ts(42,63): error TS18046: 'body' is of type 'unknown'.`,
        2,
        2.9,
      ),
    ],
  });
  r.act({
    text: "As expected, the callers now have to say what they read. I'll give the body a type in the routes.",
    calls: [failing(edit("src/routes/tasks.ts", ["      const body = await readJson(req);\n", "      const body = (await readJson(req)) as TaskBody | undefined;\n"]))],
  });
  r.act({
    text: "That line occurs in both POST and PATCH, so I'll replace both occurrences with enough context to be unique.",
    calls: [
      edit(
        "src/routes/tasks.ts",
        [
          '    if (url.pathname === "/tasks" && req.method === "POST") {\n      const body = await readJson(req);\n',
          '    if (url.pathname === "/tasks" && req.method === "POST") {\n      const body = (await readJson(req)) as TaskBody | undefined;\n',
        ],
        [
          '    if (req.method === "PATCH") {\n      const body = await readJson(req);\n',
          '    if (req.method === "PATCH") {\n      const body = (await readJson(req)) as TaskBody | undefined;\n',
        ],
        [
          "export type Route = ",
          "/** What POST and PATCH accept; fields are checked before use. */\ninterface TaskBody {\n  title?: unknown;\n  done?: unknown;\n}\n\nexport type Route = ",
        ],
      ),
    ],
  });
  r.act({
    calls: [
      bash(
        "npm run typecheck",
        `
> tasktrack@0.3.2 typecheck
> tsc --noEmit

src/routes/tasks.ts(50,32): error TS2322: Type 'unknown' is not assignable to type 'string | undefined'.
src/routes/tasks.ts(50,51): error TS2322: Type 'unknown' is not assignable to type 'boolean | undefined'.`,
        2,
        2.7,
      ),
    ],
  });
  r.act({
    thinking: "PATCH passes the raw values to store.update. Narrow them: a title must be a string, done a boolean; anything else is ignored for now (validation proper is a separate change).",
    calls: [
      edit("src/routes/tasks.ts", [
        "      const task = store.update(id, { title: body?.title, done: body?.done });",
        `      const task = store.update(id, {
        title: typeof body?.title === "string" ? body.title : undefined,
        done: typeof body?.done === "boolean" ? body.done : undefined,
      });`,
      ]),
    ],
  });
  r.act({
    calls: [
      bash(
        "npm run typecheck && npm run lint",
        "\n> tasktrack@0.3.2 typecheck\n> tsc --noEmit\n\n\n> tasktrack@0.3.2 lint\n> biome lint src test\n\nChecked 7 files in 5ms. No fixes applied.",
        0,
        3.6,
      ),
    ],
  });
  r.reply(
    "Clean now: `readJson` returns `unknown`, and the routes read the body through a small `TaskBody` type and narrow `title`/`done` before use. Typecheck and lint both pass with no warnings.",
  );
}
