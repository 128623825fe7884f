/**
 * Part 2 of the example session: rate limiting. A first attempt with fixed windows is abandoned
 * (the user goes back, and the abandoned branch is summarized); the second uses a token bucket.
 */
import { bash, edit, read, type SessionRecorder, write } from "./recorder.js";
import { testRun } from "./workspace.js";

const FIXED_WINDOW = `import type { IncomingMessage, ServerResponse } from "node:http";
import { sendJson } from "../http.js";

export interface RateLimitOptions {
  limit: number;
  windowMs: number;
  now?: () => number;
}

/** Fixed-window counter per client: at most \`limit\` requests per window. */
export function rateLimit({ limit, windowMs, now = Date.now }: RateLimitOptions) {
  const windows = new Map<string, { start: number; count: number }>();
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const key = clientKey(req);
    const t = now();
    let w = windows.get(key);
    if (!w || t - w.start >= windowMs) {
      w = { start: t - (t % windowMs), count: 0 };
      windows.set(key, w);
    }
    w.count++;
    if (w.count <= limit) return true;
    const retryAfter = Math.ceil((w.start + windowMs - t) / 1000);
    res.setHeader("retry-after", String(retryAfter));
    sendJson(res, 429, { error: "rate limit exceeded" });
    return false;
  };
}

export function clientKey(req: IncomingMessage): string {
  const apiKey = req.headers["x-api-key"];
  if (typeof apiKey === "string" && apiKey) return \`key:\${apiKey}\`;
  return \`ip:\${req.socket.remoteAddress ?? "unknown"}\`;
}
`;

const FIXED_WINDOW_TEST = `import assert from "node:assert/strict";
import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, it } from "node:test";
import { rateLimit } from "../src/middleware/rate-limit.js";

const req = (apiKey?: string) =>
  ({ headers: apiKey ? { "x-api-key": apiKey } : {}, socket: { remoteAddress: "10.0.0.7" } }) as unknown as IncomingMessage;

function res() {
  const r = { status: 0, headers: {} as Record<string, string>, setHeader: (k: string, v: string) => { r.headers[k] = v; }, writeHead: (s: number) => { r.status = s; return r; }, end: () => {} };
  return r;
}

describe("fixed window", () => {
  it("admits up to the limit, then answers 429", () => {
    const limit = rateLimit({ limit: 2, windowMs: 60_000, now: () => 1_000 });
    assert.equal(limit(req("k"), res() as unknown as ServerResponse), true);
    assert.equal(limit(req("k"), res() as unknown as ServerResponse), true);
    const r = res();
    assert.equal(limit(req("k"), r as unknown as ServerResponse), false);
    assert.equal(r.status, 429);
    assert.equal(r.headers["retry-after"], "59");
  });

  it("starts over in the next window", () => {
    let t = 1_000;
    const limit = rateLimit({ limit: 1, windowMs: 60_000, now: () => t });
    limit(req("k"), res() as unknown as ServerResponse);
    t = 60_000;
    assert.equal(limit(req("k"), res() as unknown as ServerResponse), true);
  });

  it("keeps clients apart", () => {
    const limit = rateLimit({ limit: 1, windowMs: 60_000, now: () => 0 });
    assert.equal(limit(req("a"), res() as unknown as ServerResponse), true);
    assert.equal(limit(req("b"), res() as unknown as ServerResponse), true);
  });
});
`;

const TOKEN_BUCKET = `import type { IncomingMessage, ServerResponse } from "node:http";
import { sendJson } from "../http.js";

export interface TokenBucketOptions {
  /** burst size: how many requests a client may make at once */
  capacity: number;
  /** tokens added per second; capacity / 60 means "capacity per minute" */
  refillPerSecond: number;
  now?: () => number;
  /** buckets idle this long are dropped, so one-off clients don't grow memory forever */
  idleMs?: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/**
 * A token bucket per client: a full bucket admits a burst of \`capacity\`, after that requests
 * are admitted at the refill rate. Unlike fixed windows, two bursts cannot meet at a window edge.
 */
export function rateLimit({ capacity, refillPerSecond, now = Date.now, idleMs = 10 * 60_000 }: TokenBucketOptions) {
  const buckets = new Map<string, Bucket>();
  let lastSweep = now();
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const t = now();
    if (t - lastSweep > idleMs) {
      for (const [key, b] of buckets) if (t - b.updatedAt > idleMs) buckets.delete(key);
      lastSweep = t;
    }
    const key = clientKey(req);
    const bucket = buckets.get(key) ?? { tokens: capacity, updatedAt: t };
    bucket.tokens = Math.min(capacity, bucket.tokens + ((t - bucket.updatedAt) / 1000) * refillPerSecond);
    bucket.updatedAt = t;
    buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return true;
    }
    const retryAfter = Math.round((1 - bucket.tokens) / refillPerSecond);
    res.setHeader("retry-after", String(retryAfter));
    sendJson(res, 429, { error: "rate limit exceeded", retryAfterSeconds: retryAfter });
    return false;
  };
}

/** Requests with an API key share its bucket; anonymous ones share their IP's. */
export function clientKey(req: IncomingMessage): string {
  const apiKey = req.headers["x-api-key"];
  if (typeof apiKey === "string" && apiKey) return \`key:\${apiKey}\`;
  return \`ip:\${req.socket.remoteAddress ?? "unknown"}\`;
}
`;

const TOKEN_BUCKET_TEST = `import assert from "node:assert/strict";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { rateLimit } from "../src/middleware/rate-limit.js";
import { createApp } from "../src/server.js";

const req = (apiKey?: string) =>
  ({ headers: apiKey ? { "x-api-key": apiKey } : {}, socket: { remoteAddress: "10.0.0.7" } }) as unknown as IncomingMessage;

function res() {
  const r = { status: 0, headers: {} as Record<string, string>, setHeader: (k: string, v: string) => { r.headers[k] = v; }, writeHead: (s: number) => { r.status = s; return r; }, end: () => {} };
  return r;
}
const send = (limit: ReturnType<typeof rateLimit>, key = "k") => limit(req(key), res() as unknown as ServerResponse);

describe("token bucket", () => {
  it("admits a burst up to capacity, then answers 429 with Retry-After", () => {
    const limit = rateLimit({ capacity: 3, refillPerSecond: 1, now: () => 0 });
    for (let i = 0; i < 3; i++) assert.equal(send(limit), true);
    const r = res();
    assert.equal(limit(req("k"), r as unknown as ServerResponse), false);
    assert.equal(r.status, 429);
    assert.equal(r.headers["retry-after"], "1");
  });

  it("refills at the configured rate", () => {
    let t = 0;
    const limit = rateLimit({ capacity: 2, refillPerSecond: 1, now: () => t });
    send(limit);
    send(limit);
    t = 1_700;
    assert.equal(send(limit), true);
    const r = res();
    assert.equal(limit(req("k"), r as unknown as ServerResponse), false);
    assert.equal(r.headers["retry-after"], "1");
  });

  it("cannot be doubled at a minute boundary", () => {
    let t = 59_000;
    const limit = rateLimit({ capacity: 100, refillPerSecond: 100 / 60, now: () => t });
    let admitted = 0;
    for (let i = 0; i < 100; i++) if (send(limit)) admitted++;
    t = 61_000;
    for (let i = 0; i < 100; i++) if (send(limit)) admitted++;
    assert.equal(admitted, 103);
  });

  it("keeps a bucket per API key", () => {
    const limit = rateLimit({ capacity: 1, refillPerSecond: 1, now: () => 0 });
    assert.equal(send(limit, "a"), true);
    assert.equal(send(limit, "b"), true);
    assert.equal(send(limit, "a"), false);
  });
});

describe("rate limit through the server", () => {
  const server = createApp(undefined, { requestsPerMinute: 2 });
  let base = "";

  before(async () => {
    await new Promise<void>((resolve) => server.listen(3100, resolve));
    base = \`http://127.0.0.1:\${(server.address() as AddressInfo).port}\`;
  });
  after(() => server.close());

  it("answers 429 with Retry-After once the bucket is empty", async () => {
    await fetch(\`\${base}/tasks\`);
    await fetch(\`\${base}/tasks\`);
    const res = await fetch(\`\${base}/tasks\`);
    assert.equal(res.status, 429);
    assert.ok(Number(res.headers.get("retry-after")) >= 1);
  });
});
`;

export const TASK_TESTS = [
  "creates a task",
  "rejects a task without a title",
  "lists tasks a page at a time",
  "walks every page with the cursor",
  "returns no cursor when the last page is exactly full",
  "rejects a bad limit or cursor",
  "updates a task",
  "deletes a task",
];

const ok = (names: string[]) => names.map((name, i) => ({ name, ok: true, ms: 2.5 + ((i * 5.9) % 17) }));

/** The first attempt, which the user turns down; the script then goes back and summarizes it. */
export function fixedWindowAttempt(r: SessionRecorder): void {
  r.user(
    "Next: we need rate limiting before we open the API to the mobile team. 100 requests per minute per API key " +
      "(`x-api-key` header; requests without a key share one bucket per IP). Over the limit → 429 with a " +
      "`Retry-After` header. No new dependencies please.",
  );
  r.act({
    thinking:
      "No dependencies, so a small middleware. Simplest thing that matches '100 per minute': a fixed-window counter keyed " +
      "by API key or IP, reset at each minute. Hook it into createApp before the routes. Need an injectable clock for tests.",
    text: "I'll add a small middleware in front of the routes. First, how requests flow through the server:",
    calls: [read("src/server.ts")],
  });
  r.act({ calls: [write("src/middleware/rate-limit.ts", FIXED_WINDOW)] });
  r.act({
    calls: [
      edit(
        "src/server.ts",
        ['import { taskRoutes } from "./routes/tasks.js";', 'import { rateLimit } from "./middleware/rate-limit.js";\nimport { taskRoutes } from "./routes/tasks.js";'],
        ["  const routes = [taskRoutes(store)];\n", "  const routes = [taskRoutes(store)];\n  const limiter = rateLimit({ limit: 100, windowMs: 60_000 });\n"],
        ["    try {\n", "    try {\n      if (!limiter(req, res)) return;\n"],
      ),
    ],
  });
  r.act({ calls: [write("test/rate-limit.test.ts", FIXED_WINDOW_TEST)] });
  const run = testRun("tasks API", ok([...TASK_TESTS, "admits up to the limit, then answers 429", "starts over in the next window", "keeps clients apart"]), 812.6);
  r.act({ calls: [bash("npm test", run.output, run.exitCode, 3.4)] });
  r.act({ calls: [bash("npm run typecheck && npm run lint", "\n> tasktrack@0.3.2 typecheck\n> tsc --noEmit\n\n\n> tasktrack@0.3.2 lint\n> biome lint src test\n\nChecked 9 files in 7ms. No fixes applied.", 0, 3.5)] });
  r.reply(
    "Rate limiting is wired in: `src/middleware/rate-limit.ts` counts requests per client (API key, else IP) in fixed one-minute windows, and the 101st request in a window gets `429` with `Retry-After` set to the seconds left in the window. Tests cover the limit, the window reset and separate clients.",
  );
  r.user(
    "Hmm, with fixed windows a client can send 100 requests at 12:00:59 and another 100 at 12:01:00 — 200 in two seconds. " +
      "The mobile app's retry logic will hit exactly that. Can we do better?",
  );
  r.reply(
    "You're right, that's the known weakness of fixed windows: the limit holds per window, not per any 60 seconds. Two options without dependencies:\n\n" +
      "1. **Sliding log**: keep each client's request times for the last minute. Exact, but up to 100 timestamps per client.\n" +
      "2. **Token bucket**: each client has a bucket of 100 tokens refilled at 100/60 per second; a request takes one. Two numbers per client, bursts are bounded by the bucket, and `Retry-After` falls out of the refill rate.\n\n" +
      "I'd go with the token bucket. It's a different design rather than a patch, so it's cleaner to redo this step than to modify the window code.",
    "Fixed window allows 2x limit at the boundary. Sliding window log: exact but memory O(limit) per key. Sliding window counter: approximation. Token bucket: O(1) per key, smooth. Recommend token bucket.",
  );
}

export const ABANDONED_SUMMARY = `## Goal
Rate-limit the API: 100 requests per minute per API key (\`x-api-key\`, else per IP), 429 with \`Retry-After\`, no new dependencies.

## What was tried
- A fixed-window counter middleware in \`src/middleware/rate-limit.ts\`, wired into \`createApp\` in \`src/server.ts\` before the routes; unit tests in \`test/rate-limit.test.ts\`. Tests, typecheck and lint passed.

## Why it was abandoned
- The user rejected fixed windows: a client can send 100 requests at the end of one minute and 100 at the start of the next (200 in two seconds), which the mobile app's retries would hit.
- Agreed alternative: a token bucket per client (capacity 100, refill 100/60 per second); \`Retry-After\` from the refill rate.

## Left behind in the working tree
- \`src/middleware/rate-limit.ts\` and \`test/rate-limit.test.ts\` (fixed-window version) and the limiter wiring in \`src/server.ts\` still exist and must be replaced.`;

export function tokenBucket(r: SessionRecorder): { labeled: string } {
  r.user(
    "Add rate limiting as a token bucket: 100 requests per minute per API key (`x-api-key`, fall back to the client IP), " +
      "so bursts at minute boundaries can't double the rate. Empty bucket → 429 with `Retry-After` in whole seconds. " +
      "No new dependencies. Make the limit configurable in createApp so tests can use a small one.",
  );
  r.act({
    thinking: "The branch summary says the fixed-window files are still in the working tree. Check git status before writing anything.",
    calls: [bash("git status --short", " M README.md\n M src/http.ts\n M src/routes/tasks.ts\n M src/server.ts\n M src/store.ts\n M src/types.ts\n M test/tasks.test.ts\n?? src/middleware/\n?? test/rate-limit.test.ts", 0, 0.2)],
  });
  r.act({
    text: "The fixed-window files from the earlier attempt are still there. I'll replace them rather than patch them; first a look at the current wiring:",
    calls: [read("src/server.ts"), read("src/middleware/rate-limit.ts", 1, 12)],
  });
  r.act({
    thinking:
      "Bucket per client: tokens, updatedAt. On each request refill by elapsed * rate, capped at capacity. Admit if >= 1. " +
      "Retry-After = time until one token = (1 - tokens) / rate seconds. Memory: sweep idle buckets occasionally. " +
      "Keep clientKey as it was; it was fine.",
    calls: [write("src/middleware/rate-limit.ts", TOKEN_BUCKET)],
  });
  r.act({
    text: "Now make the limit configurable in `createApp` (0 turns it off):",
    calls: [
      edit("src/server.ts", [
        "export function createApp(store = new TaskStore()): Server {\n  const routes = [taskRoutes(store)];\n  const limiter = rateLimit({ limit: 100, windowMs: 60_000 });\n",
        `export interface AppOptions {
  /** requests per minute per client (API key, else IP); 0 turns the limiter off */
  requestsPerMinute?: number;
}

export function createApp(store = new TaskStore(), options: AppOptions = {}): Server {
  const routes = [taskRoutes(store)];
  const perMinute = options.requestsPerMinute ?? 100;
  const limiter = perMinute > 0 ? rateLimit({ capacity: perMinute, refillPerSecond: perMinute / 60 }) : () => true;
`,
      ]),
    ],
  });
  r.act({
    text: "For the end-to-end test I'll reuse the server setup of the API tests:",
    calls: [read("test/tasks.test.ts", 1, 20)],
  });
  r.act({ calls: [write("test/rate-limit.test.ts", TOKEN_BUCKET_TEST)] });
  const bucketTests = ["admits a burst up to capacity, then answers 429 with Retry-After", "refills at the configured rate", "cannot be doubled at a minute boundary", "keeps a bucket per API key", "answers 429 with Retry-After once the bucket is empty"];
  const failing = testRun(
    "token bucket",
    [
      ...ok(TASK_TESTS),
      { name: bucketTests[0], ok: true, ms: 1.2 },
      {
        name: bucketTests[1],
        ok: false,
        ms: 0.9,
        failure: "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\n'0' !== '1'\n\n    at TestContext.<anonymous> (/home/dev/projects/tasktrack/test/rate-limit.test.ts:36:12)",
      },
      ...ok(bucketTests.slice(2)),
    ],
    905.1,
  );
  r.act({ calls: [bash("npm test", failing.output, failing.exitCode, 3.5)] });
  r.act({
    thinking: "0.3 tokens short at 1 token/s: 0.7 s to wait, Math.round gives 0. Retry-After 0 tells clients to hammer immediately. Must round up, and never below 1.",
    text: "`Retry-After` rounds 0.7 s down to 0, which invites an immediate retry. It has to round up:",
    calls: [edit("src/middleware/rate-limit.ts", ["Math.round((1 - bucket.tokens) / refillPerSecond)", "Math.max(1, Math.ceil((1 - bucket.tokens) / refillPerSecond))"])],
  });
  const green = testRun("token bucket", ok([...TASK_TESTS, ...bucketTests]), 887.3);
  r.act({ calls: [bash("npm test", green.output, green.exitCode, 3.4)] });
  r.act({ calls: [bash("npm run typecheck && npm run lint", "\n> tasktrack@0.3.2 typecheck\n> tsc --noEmit\n\n\n> tasktrack@0.3.2 lint\n> biome lint src test\n\nChecked 9 files in 6ms. No fixes applied.", 0, 3.6)] });
  const labeled = r.reply(
    `Token-bucket rate limiting is in:

- \`src/middleware/rate-limit.ts\`: one bucket per client (API key, else IP), capacity = requests per minute, refilled continuously at capacity/60 per second. Idle buckets are swept after 10 minutes.
- Over the limit: \`429\` with \`Retry-After\` in whole seconds, rounded **up** (the test caught a \`0\`).
- \`createApp(store, { requestsPerMinute })\`, default 100, \`0\` disables it.
- Tests: burst, refill, the minute-boundary case (200 attempts across 12:00:59/12:01:01 admit 103, not 200), per-key buckets, and one end-to-end 429 through the server.

The fixed-window files from the first attempt are fully replaced.`,
  );
  return { labeled };
}
