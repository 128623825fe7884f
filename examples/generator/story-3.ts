/**
 * Part 3 of the example session: ETags and a PATCH bug, a flaky CI run, and the release. Also a
 * side question the user later walks away from (a plain branch, no summary).
 */
import { bash, edit, failing, read, type SessionRecorder, write } from "./recorder.js";
import { TASK_TESTS } from "./story-2.js";
import { INITIAL_FILES } from "./project.js";
import { lineDiff, testRun, type Workspace } from "./workspace.js";

/** `git diff` of files against the project as it was when the session started. */
function gitDiff(ws: Workspace, paths: string[]): string {
  return paths
    .map((path) => {
      const { diff, firstChangedLine } = lineDiff(INITIAL_FILES[path], ws.content(path));
      return `diff --git a/${path} b/${path}\n--- a/${path}\n+++ b/${path}\n@@ -${firstChangedLine} +${firstChangedLine} @@\n${diff}`;
    })
    .join("\n");
}

const BUCKET_TESTS = [
  "admits a burst up to capacity, then answers 429 with Retry-After",
  "refills at the configured rate",
  "cannot be doubled at a minute boundary",
  "keeps a bucket per API key",
  "answers 429 with Retry-After once the bucket is empty",
];

const ok = (names: string[]) => names.map((name, i) => ({ name, ok: true, ms: 2.1 + ((i * 6.7) % 19) }));

export function sideQuestion(r: SessionRecorder): void {
  r.user("Quick question while I review: why does the store use a Map rather than an array?");
  r.reply(
    "Because almost every operation is by id. `get`, `update` and `remove` are O(1) lookups in a `Map`, where an array would scan (or need a separate index to stay in sync). A `Map` also iterates in insertion order, which is why the old `list()` came out in creation order. The new `listPage` sorts explicitly on `(createdAt, id)` anyway, so pagination doesn't depend on that. The only thing an array would give you is cheap slicing by position, and the keyset cursor avoids positions on purpose.",
  );
}

export function etagAndPatch(r: SessionRecorder): void {
  r.user("Add an ETag header on GET /tasks/:id and support If-None-Match → 304, so the dashboard can poll cheaply.");
  r.act({ calls: [read("src/routes/tasks.ts")] });
  r.act({
    thinking:
      "ETag from a hash of the stored task JSON: it changes whenever any field changes (updatedAt too). Strong ETag, quoted. " +
      "If-None-Match may hold several tags separated by commas, or *. Handle the list; * matches any existing task.",
    text: "I'll derive a strong ETag from a hash of the stored task, and answer `304` when `If-None-Match` lists it (or is `*`).",
    calls: [
      edit(
        "src/routes/tasks.ts",
        ['import type { IncomingMessage, ServerResponse } from "node:http";', 'import { createHash } from "node:crypto";\nimport type { IncomingMessage, ServerResponse } from "node:http";'],
        ['import type { TaskStore } from "../store.js";', 'import type { TaskStore } from "../store.js";\nimport type { Task } from "../types.js";'],
        [
          `    if (req.method === "GET") {
      const task = store.get(id);
      if (task) sendJson(res, 200, task);
      else sendJson(res, 404, { error: "task not found" });
      return true;
    }`,
          `    if (req.method === "GET") {
      const task = store.get(id);
      if (!task) {
        sendJson(res, 404, { error: "task not found" });
        return true;
      }
      const etag = taskEtag(task);
      if (matchesEtag(req.headers["if-none-match"], etag)) {
        res.writeHead(304, { etag }).end();
        return true;
      }
      res.setHeader("etag", etag);
      sendJson(res, 200, task);
      return true;
    }`,
        ],
        [
          "  return Number.isInteger(n) && n >= 1 && n <= MAX_LIMIT ? n : undefined;\n}\n",
          `  return Number.isInteger(n) && n >= 1 && n <= MAX_LIMIT ? n : undefined;
}

/** A strong ETag: it changes whenever any stored field of the task changes. */
export function taskEtag(task: Task): string {
  return \`"\${createHash("sha1").update(JSON.stringify(task)).digest("base64url").slice(0, 16)}"\`;
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(",").some((tag) => tag.trim() === etag || tag.trim() === "*");
}
`,
        ],
      ),
    ],
  });
  r.act({ calls: [read("test/tasks.test.ts", 50)] });
  r.act({
    calls: [
      edit("test/tasks.test.ts", [
        '  it("updates a task", async () => {\n',
        `  it("sends an ETag and answers 304 while it matches", async () => {
    const created = await (await fetch(\`\${base}/tasks\`, { method: "POST", body: JSON.stringify({ title: "etag" }) })).json();
    const first = await fetch(\`\${base}/tasks/\${created.id}\`);
    const etag = first.headers.get("etag");
    assert.ok(etag);
    const again = await fetch(\`\${base}/tasks/\${created.id}\`, { headers: { "if-none-match": etag } });
    assert.equal(again.status, 304);
    await fetch(\`\${base}/tasks/\${created.id}\`, { method: "PATCH", body: JSON.stringify({ done: true }) });
    const changed = await fetch(\`\${base}/tasks/\${created.id}\`, { headers: { "if-none-match": etag } });
    assert.equal(changed.status, 200);
  });

  it("updates a task", async () => {
`,
      ]),
    ],
  });
  const etagTests = [...TASK_TESTS.slice(0, 6), "sends an ETag and answers 304 while it matches", ...TASK_TESTS.slice(6)];
  const run = testRun("tasks API", ok([...etagTests, ...BUCKET_TESTS]), 902.2);
  r.act({ calls: [bash("npm test", run.output, run.exitCode, 3.5)] });
  r.reply("Done: `GET /tasks/:id` sends a strong `ETag` (a short SHA-1 of the stored task), and `If-None-Match` with that tag (or `*`, or a list containing it) gets `304` with no body. Any change to the task, including `updatedAt`, changes the tag. Tests pass.");

  r.user("While you're in there: PATCH /tasks/:id with only `{\"done\": true}` wipes the title. Saw it on the dashboard this morning.");
  r.act({
    thinking: "The route passes title: undefined when it is absent, and store.update does Object.assign(task, patch) — an own property with value undefined overwrites. Confirm with a quick script before changing anything.",
    text: "I suspect `Object.assign` copying an explicit `undefined`. Let me confirm:",
    calls: [
      bash(
        `node --import tsx -e 'import("./src/store.ts").then(({ TaskStore }) => { const s = new TaskStore(); const t = s.create("ship it"); console.log(s.update(t.id, { title: undefined, done: true })); })'`,
        "{\n  id: '3b8f1d0c-4c1e-4f0a-9d55-1f7c2a9e6b21',\n  title: undefined,\n  done: true,\n  createdAt: '2026-03-14T11:02:41.118Z',\n  updatedAt: '2026-03-14T11:02:41.119Z'\n}",
        0,
        0.9,
      ),
    ],
  });
  r.act({
    text: "Confirmed: the route passes `title: undefined` and `Object.assign` copies it over the stored title. Fix in the store, so every caller is safe:",
    calls: [
      edit("src/store.ts", [
        "    Object.assign(task, patch, { updatedAt: now.toISOString() });\n",
        "    // Only the fields the caller set: an absent title must not erase the stored one.\n    if (patch.title !== undefined) task.title = patch.title;\n    if (patch.done !== undefined) task.done = patch.done;\n    task.updatedAt = now.toISOString();\n",
      ]),
    ],
  });
  r.act({
    calls: [
      edit("test/tasks.test.ts", [
        '  it("deletes a task", async () => {\n',
        `  it("keeps the title when only done changes", async () => {
    const created = await (await fetch(\`\${base}/tasks\`, { method: "POST", body: JSON.stringify({ title: "keep me" }) })).json();
    const res = await fetch(\`\${base}/tasks/\${created.id}\`, { method: "PATCH", body: JSON.stringify({ done: true }) });
    const task = await res.json();
    assert.equal(task.title, "keep me");
    assert.equal(task.done, true);
  });

  it("deletes a task", async () => {
`,
      ]),
    ],
  });
  const fixed = testRun("tasks API", ok([...etagTests.slice(0, -1), "keeps the title when only done changes", "deletes a task", ...BUCKET_TESTS]), 915.8);
  r.act({ calls: [bash("npm test", fixed.output, fixed.exitCode, 3.6)] });
  r.reply(
    "Fixed. `TaskStore.update` now sets only the fields that are present, so `PATCH {\"done\": true}` keeps the title. There's a regression test for exactly your case. The bug was in the store, not the route: `Object.assign` copies properties whose value is `undefined`.",
  );
}

export function flakyCi(r: SessionRecorder): void {
  r.user(
    "CI failed twice today with EADDRINUSE. Log from the last run:\n\n```\n▶ rate limit through the server\n  ✖ answers 429 with Retry-After once the bucket is empty (1.3ms)\n    Error: listen EADDRINUSE: address already in use :::3100\n        at Server.setupListenHandle [as _listen2] (node:net:1908:16)\n        at listenInCluster (node:net:1965:12)\n        at Server.listen (node:net:2067:7)\n```\n\nPasses locally every time. Can you look?",
  );
  r.act({ calls: [bash('grep -rn "listen(" src test', (ws) => ws.grep("listen("), 0, 0.2)] });
  r.act({ calls: [read("test/rate-limit.test.ts", 58)] });
  r.act({
    thinking:
      "Both test files listen on the fixed port 3100. node --test runs test files in parallel child processes, so whether " +
      "they collide depends on timing: locally the first file usually finishes first, on a loaded CI runner they overlap. " +
      "Port 0 lets the OS pick a free port; base already reads server.address(), so nothing else changes.",
    text:
      "Both test files bind the fixed port 3100, and `node --test` runs test files in parallel processes. On a slow CI runner they overlap. Port 0 lets the OS pick a free port (the tests already read the real port from `server.address()`):",
    calls: [
      edit("test/tasks.test.ts", ["server.listen(3100, resolve)", 'server.listen(0, "127.0.0.1", resolve)']),
      edit("test/rate-limit.test.ts", ["server.listen(3100, resolve)", 'server.listen(0, "127.0.0.1", resolve)']),
    ],
  });
  const total = TASK_TESTS.length + 2 + BUCKET_TESTS.length;
  r.act({
    calls: [
      bash(
        "for i in 1 2 3 4 5; do npm test --silent 2>&1 | grep -E '^ℹ (pass|fail)'; done",
        Array.from({ length: 5 }, () => `ℹ pass ${total}\nℹ fail 0`).join("\n"),
        0,
        17,
      ),
    ],
  });
  r.act({ calls: [bash('grep -rn "3100" src test || echo "no hard-coded ports left"', "no hard-coded ports left", 0, 0.2)] });
  r.reply(
    "That was a race between test files, not a flaky test: both suites listened on port 3100 and `node --test` runs files concurrently, so on CI they sometimes overlapped. Both now listen on port 0 (a free port chosen by the OS) on 127.0.0.1. Five runs in a row pass, and no hard-coded port is left.",
  );
}

const CHANGELOG = `# Changelog

## 0.4.0 — 2026-03-14

### Breaking
- \`GET /tasks\` returns \`{ items, nextCursor }\` pages instead of a bare array (\`limit\` 1–200, default 50; \`cursor\`).

### Added
- Rate limiting: a token bucket of 100 requests per minute per API key (\`x-api-key\`) or client IP; \`429\` with \`Retry-After\`. Configure with \`createApp(store, { requestsPerMinute })\`.
- \`ETag\` on \`GET /tasks/:id\`, with \`If-None-Match\` → \`304\`.

### Fixed
- \`PATCH /tasks/:id\` without a title no longer erases the title.
- Tests no longer collide on port 3100 when test files run in parallel.
`;

export function release(r: SessionRecorder): { labeled: string } {
  r.userBash("git diff --stat", " README.md                     |   3 +-\n package.json                  |   0\n src/http.ts                   |   2 +-\n src/routes/tasks.ts           |  66 ++++++++++++++++++++++++++++++------\n src/server.ts                 |  11 +++++-\n src/store.ts                  |  38 ++++++++++++++++++++-\n src/types.ts                  |   6 ++++\n test/tasks.test.ts            |  72 +++++++++++++++++++++++++++++++++++++---\n 8 files changed, 180 insertions(+), 18 deletions(-)");
  r.user("Great. Bump to 0.4.0, add a CHANGELOG entry, and commit. One commit per feature would be nice.");
  r.act({ calls: [bash("git log --oneline -5", "9c41d7e Return 404 JSON for unknown routes\n51b0a2f Add PATCH and DELETE for tasks\n0e7d3c9 Validate task titles\n7f2a815 Add task store and routes\nb3e4c60 Initial commit", 0, 0.1)] });
  r.act({
    text: "Let me look at the core changes once more before committing:",
    calls: [bash("git diff src/store.ts src/server.ts", (ws) => gitDiff(ws, ["src/store.ts", "src/server.ts"]), 0, 0.2)],
  });
  r.act({ calls: [failing(read("CHANGELOG.md"))] });
  r.act({ text: "No changelog yet. I'll start one with this release:", calls: [write("CHANGELOG.md", CHANGELOG)] });
  r.act({ calls: [edit("package.json", ['"version": "0.3.2"', '"version": "0.4.0"'])] });
  r.act({
    thinking: "Split by feature. http.ts's lint fix goes with pagination since the route changes are intertwined. server.ts carries both the limiter and nothing else. The flaky-port fix touches both test files; the rate-limit file is new in the rate-limit commit, so the port change rides along there.",
    calls: [
      bash(
        [
          'git add src/types.ts src/store.ts src/http.ts src/routes/tasks.ts test/tasks.test.ts README.md && git commit -qm "Cursor pagination for GET /tasks; ETag on GET /tasks/:id; keep title on partial PATCH"',
          'git add src/middleware/rate-limit.ts src/server.ts test/rate-limit.test.ts && git commit -qm "Token-bucket rate limiting per API key or IP"',
          'git add CHANGELOG.md package.json && git commit -qm "Release 0.4.0"',
          "git log --oneline -4",
        ].join(" && \\\n"),
        "a81f3c2 Release 0.4.0\n6d09be4 Token-bucket rate limiting per API key or IP\n2c7e915 Cursor pagination for GET /tasks; ETag on GET /tasks/:id; keep title on partial PATCH\n9c41d7e Return 404 JSON for unknown routes",
        0,
        0.6,
      ),
    ],
  });
  r.act({ calls: [bash("git status --short && npm test --silent 2>&1 | tail -8", (ws) => `ℹ tests ${TASK_TESTS.length + 2 + BUCKET_TESTS.length}\nℹ suites 3\nℹ pass ${TASK_TESTS.length + 2 + BUCKET_TESTS.length}\nℹ fail 0\nℹ cancelled 0\nℹ skipped 0\nℹ todo 0\nℹ duration_ms 934.${ws.paths().length}17`, 0, 3.4)] });
  const labeled = r.reply(
    "Released 0.4.0 locally in three commits:\n\n- `2c7e915` pagination, ETag and the PATCH fix (they all touch `routes/tasks.ts` and the same test file, so splitting them further would mean partial hunks)\n- `6d09be4` token-bucket rate limiting\n- `a81f3c2` version bump and the new `CHANGELOG.md` (the pagination change is listed under **Breaking**)\n\nWorking tree is clean and tests pass. Nothing is pushed. The dashboard needs the `.items` change before this is deployed.",
  );
  return { labeled };
}
