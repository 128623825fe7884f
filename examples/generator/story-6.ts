/**
 * Part 6 of the example session: request logging, then a body size limit, whose first prompt the
 * user rewrites (a plain branch, no summary), and a standup summary to close the day.
 */
import { bash, edit, read, type SessionRecorder, write } from "./recorder.js";
import { ok, TESTS_AFTER_RELEASE } from "./story-4.js";
import { testRun } from "./workspace.js";

const TESTS_BEFORE_LOGGING = [
  ...TESTS_AFTER_RELEASE.slice(0, 9),
  "answers health checks even when rate-limited",
  ...TESTS_AFTER_RELEASE.slice(9),
  "pages in creation order even when tasks arrive out of order",
  "continues after a cursor whose task was deleted",
  "filters by done and pages past tasks that don't match",
  "keeps the order index in step with deletes",
  "trims titles and enforces 1-200 characters",
  "rejects wrong types in a patch, naming the field",
  "rejects a patch that changes nothing",
  "accepts a valid partial patch",
];

const LOG_TESTS = ["logs one line per request with status and duration", "reuses a valid x-request-id", "never logs the API key itself"];

const LOG_MIDDLEWARE = `import { createHash, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

export interface LogLine {
  time: string;
  requestId: string;
  method: string;
  path: string;
  status: number;
  durationMs: number;
  client: string;
}

export type LogSink = (line: LogLine) => void;

export const stdoutSink: LogSink = (line) => process.stdout.write(\`\${JSON.stringify(line)}\\n\`);

/**
 * Gives each request an id (the caller's x-request-id when it looks sane, else a fresh one),
 * echoes it in the response, and logs one line when the response has been sent.
 */
export function logRequests(sink: LogSink, now = () => performance.now()) {
  return (req: IncomingMessage, res: ServerResponse, url: URL): void => {
    const started = now();
    const incoming = req.headers["x-request-id"];
    const requestId = typeof incoming === "string" && /^[\\w-]{1,64}$/.test(incoming) ? incoming : randomUUID();
    res.setHeader("x-request-id", requestId);
    res.on("finish", () => {
      sink({
        time: new Date().toISOString(),
        requestId,
        method: req.method ?? "?",
        path: url.pathname,
        status: res.statusCode,
        durationMs: Math.round((now() - started) * 10) / 10,
        client: clientLabel(req),
      });
    });
  };
}

/** API keys are secrets: log a short hash, which still tells clients apart. */
function clientLabel(req: IncomingMessage): string {
  const apiKey = req.headers["x-api-key"];
  if (typeof apiKey === "string" && apiKey) return \`key:\${createHash("sha256").update(apiKey).digest("hex").slice(0, 10)}\`;
  return \`ip:\${req.socket.remoteAddress ?? "unknown"}\`;
}
`;

const LOG_TEST = `import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import type { LogLine } from "../src/middleware/log.js";
import { createApp } from "../src/server.js";

describe("request log", () => {
  const lines: LogLine[] = [];
  const server = createApp(undefined, { log: (line) => lines.push(line) });
  let base = "";

  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = \`http://127.0.0.1:\${(server.address() as AddressInfo).port}\`;
  });
  after(() => server.close());

  const lastLine = async () => {
    await new Promise((resolve) => setImmediate(resolve));
    return lines[lines.length - 1];
  };

  it("logs one line per request with status and duration", async () => {
    const res = await fetch(\`\${base}/tasks/nope\`);
    const line = await lastLine();
    assert.equal(line.status, 404);
    assert.equal(line.path, "/tasks/nope");
    assert.equal(line.requestId, res.headers.get("x-request-id"));
    assert.ok(line.durationMs >= 0);
  });

  it("reuses a valid x-request-id", async () => {
    await fetch(\`\${base}/healthz\`, { headers: { "x-request-id": "lb-7f3a.21" } });
    assert.equal((await lastLine()).requestId, "lb-7f3a.21");
  });

  it("never logs the API key itself", async () => {
    await fetch(\`\${base}/healthz\`, { headers: { "x-api-key": "sk_live_very_secret" } });
    const line = await lastLine();
    assert.match(line.client, /^key:[0-9a-f]{10}$/);
    assert.ok(!JSON.stringify(lines).includes("sk_live_very_secret"));
  });
});
`;

export function requestLogging(r: SessionRecorder): void {
  r.user(
    "We need request logs for the on-call dashboards: one JSON line per request with method, path, status, duration and " +
      "a request id (reuse `x-request-id` from the load balancer when present, echo it back). Don't log API keys.",
  );
  r.act({ calls: [read("src/server.ts"), read("src/middleware/rate-limit.ts", 40, 20)] });
  r.act({
    thinking:
      "A small middleware like the limiter, but it never ends the request: it stamps the id and subscribes to 'finish' to " +
      "log status and duration. Sink injectable so tests capture lines and createApp logs nothing by default (tests stay " +
      "quiet); the main block passes stdout. Validate incoming x-request-id (length, charset), since it goes into logs " +
      "verbatim. API key: log a truncated sha256 so on-call can still tell clients apart.",
    text: "A middleware that stamps the request id and logs when the response finishes. The sink is injectable, so tests can capture lines and `createApp` stays quiet by default:",
    calls: [write("src/middleware/log.ts", LOG_MIDDLEWARE)],
  });
  r.act({
    calls: [
      edit(
        "src/server.ts",
        ['import { rateLimit } from "./middleware/rate-limit.js";', 'import { type LogSink, logRequests, stdoutSink } from "./middleware/log.js";\nimport { rateLimit } from "./middleware/rate-limit.js";'],
        ["  requestsPerMinute?: number;\n}\n", "  requestsPerMinute?: number;\n  /** where request log lines go: nowhere by default (tests), stdout when run as the server */\n  log?: LogSink;\n}\n"],
        [
          "  return createServer(async (req, res) => {\n    const url = new URL(req.url ?? \"/\", \"http://localhost\");\n",
          "  const logger = options.log ? logRequests(options.log) : undefined;\n  return createServer(async (req, res) => {\n    const url = new URL(req.url ?? \"/\", \"http://localhost\");\n    logger?.(req, res, url);\n",
        ],
        ["  const server = createApp().listen(", "  const server = createApp(undefined, { log: stdoutSink }).listen("],
      ),
    ],
  });
  r.act({ calls: [write("test/log.test.ts", LOG_TEST)] });
  const failing = testRun(
    "request log",
    [
      ...ok(TESTS_BEFORE_LOGGING),
      { name: LOG_TESTS[0], ok: true, ms: 9.8 },
      {
        name: LOG_TESTS[1],
        ok: false,
        ms: 3.1,
        failure:
          "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n+ actual - expected\n\n+ '0c5e8d8a-56a1-4c0f-a3c4-71b9e5f3d2aa'\n- 'lb-7f3a.21'\n\n    at TestContext.<anonymous> (/home/dev/projects/tasktrack/test/log.test.ts:34:12)",
      },
      { name: LOG_TESTS[2], ok: true, ms: 2.7 },
    ],
    1104.2,
    "0.4.0",
  );
  r.act({ calls: [bash("npm test", failing.output, failing.exitCode, 4.1)] });
  r.act({
    thinking: "The load balancer's ids contain dots (the test uses the format from the ops doc). My pattern was too strict. Allow dots; still bounded length and no spaces or quotes.",
    text: "The load balancer's ids contain dots, and my pattern rejected them. I'll allow dots and keep the length bound:",
    calls: [edit("src/middleware/log.ts", ["/^[\\w-]{1,64}$/", "/^[\\w.-]{1,64}$/"])],
  });
  const green = testRun("request log", ok([...TESTS_BEFORE_LOGGING, ...LOG_TESTS], 4), 1096.5, "0.4.0");
  r.act({ calls: [bash("npm test", green.output, green.exitCode, 4)] });
  r.act({
    calls: [
      bash(
        "PORT=3313 timeout 3 npm start --silent & sleep 1.5; curl -s -o /dev/null -H 'x-api-key: demo' localhost:3313/tasks?limit=2; curl -s -o /dev/null -H 'x-request-id: lb-1.2' localhost:3313/healthz; wait",
        'tasktrack listening on :3313\n{"time":"2026-03-14T16:02:11.482Z","requestId":"a1f04c3e-9b7d-4e55-8f0a-2c6d1e9b7a53","method":"GET","path":"/tasks","status":200,"durationMs":1.9,"client":"key:2a97516c35"}\n{"time":"2026-03-14T16:02:11.497Z","requestId":"lb-1.2","method":"GET","path":"/healthz","status":200,"durationMs":0.4,"client":"ip:::1"}',
        0,
        3.1,
      ),
    ],
  });
  r.reply(
    "Request logging is in (`src/middleware/log.ts`):\n\n- one JSON line per request on stdout: `time, requestId, method, path, status, durationMs, client`\n- `x-request-id` is reused when it looks sane (≤ 64 chars of letters, digits, `_ - .`), otherwise generated, and always echoed back\n- the API key is logged only as `key:` plus 10 hex characters of its SHA-256\n- `createApp` logs nothing unless given a `log` sink, so tests stay quiet; `npm start` logs to stdout\n\nThe query string is not logged (only the path) because cursors and future filters could carry user data.",
  );
}

export function bodyLimitFirstTry(r: SessionRecorder): string {
  const parent = r.session.getLeafId()!;
  r.user("The pentest report says POST /tasks accepts arbitrarily large bodies. Add a limit.");
  r.act({ calls: [read("src/http.ts")] });
  r.reply(
    "`readJson` buffers the whole body into a string with no cap, so a large POST can exhaust memory. I'd cap it at **1 MB** (Express's `body-parser` default is 100 KB, many APIs use 1 MB) and answer `413 Payload Too Large`. Before I change it: is 1 MB right for you, or do you want something tighter?",
  );
  return parent;
}

export function bodyLimit(r: SessionRecorder): void {
  r.user(
    "The pentest report says POST /tasks accepts arbitrarily large bodies. Cap request bodies at 64 KB (our payloads are tiny) " +
      "and answer 413. Check Content-Length up front, but don't trust it.",
  );
  r.act({ calls: [read("src/http.ts"), bash('grep -rn "readJson" src', (ws) => ws.grep("readJson", "src"), 0, 0.2)] });
  r.act({
    thinking:
      "Two checks: a declared Content-Length over the limit → reject before reading; while streaming, count bytes and stop " +
      "when over (chunked bodies have no Content-Length, and it can lie). Collect Buffers and decode once at the end: the " +
      "current `body += chunk` decodes each chunk separately and can split a multi-byte character across chunks. Throw a " +
      "typed error and map it to 413 in the server's catch, with Connection: close since the rest of the body is unread.",
    text:
      "Two checks: a declared `Content-Length` over the limit is rejected before reading, and the bytes are counted while streaming (chunked bodies have no length, and it can lie). I'll also collect Buffers and decode once: `body += chunk` can split a multi-byte character across chunks.",
    calls: [
      edit("src/http.ts", [
        `export async function readJson(req: IncomingMessage): Promise<unknown> {
  let body = "";
  for await (const chunk of req) body += chunk;
`,
        `export const MAX_BODY_BYTES = 64 * 1024;

/** The body is over the limit; the server answers 413 and closes the connection. */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(\`request body exceeds \${limit} bytes\`);
  }
}

export async function readJson(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<unknown> {
  if (Number(req.headers["content-length"]) > maxBytes) throw new BodyTooLargeError(maxBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new BodyTooLargeError(maxBytes);
    chunks.push(chunk);
  }
  // decode once: a multi-byte character may span two chunks
  const body = Buffer.concat(chunks).toString("utf8");
`,
      ]),
    ],
  });
  r.act({
    calls: [
      edit(
        "src/server.ts",
        ['import { sendJson } from "./http.js";', 'import { BodyTooLargeError, sendJson } from "./http.js";'],
        [
          "    } catch (error) {\n      console.error(error);\n",
          "    } catch (error) {\n      if (error instanceof BodyTooLargeError) {\n        // the rest of the body is unread: close rather than reuse the connection\n        res.setHeader(\"connection\", \"close\");\n        sendJson(res, 413, { error: error.message });\n        return;\n      }\n      console.error(error);\n",
        ],
      ),
    ],
  });
  r.act({ calls: [read("test/tasks.test.ts")] });
  r.act({
    calls: [
      edit("test/tasks.test.ts", [
        '  it("deletes a task", async () => {\n',
        `  it("refuses bodies over 64 KB with 413", async () => {
    const huge = JSON.stringify({ title: "x".repeat(70 * 1024) });
    const res = await fetch(\`\${base}/tasks\`, { method: "POST", body: huge });
    assert.equal(res.status, 413);
  });

  it("refuses an oversized chunked body that declares no length", async () => {
    const chunks = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 80; i++) controller.enqueue(new TextEncoder().encode("x".repeat(1024)));
        controller.close();
      },
    });
    const res = await fetch(\`\${base}/tasks\`, { method: "POST", body: chunks, duplex: "half" } as RequestInit);
    assert.equal(res.status, 413);
  });

  it("deletes a task", async () => {
`,
      ]),
    ],
  });
  const bodyTests = ["refuses bodies over 64 KB with 413", "refuses an oversized chunked body that declares no length"];
  const run = testRun("tasks API", ok([...TESTS_BEFORE_LOGGING.slice(0, 10), ...bodyTests, ...TESTS_BEFORE_LOGGING.slice(10), ...LOG_TESTS], 1), 1187.3, "0.4.0");
  r.act({ calls: [bash("npm test && npm run typecheck && npm run lint", `${run.output}\n\n> tasktrack@0.4.0 typecheck\n> tsc --noEmit\n\n\n> tasktrack@0.4.0 lint\n> biome lint src test\n\nChecked 14 files in 9ms. No fixes applied.`, 0, 8.3)] });
  r.reply(
    "Request bodies are capped at 64 KB (`MAX_BODY_BYTES` in `src/http.ts`):\n\n- a `Content-Length` over the limit is refused before reading anything\n- otherwise bytes are counted while streaming, so chunked or lying requests stop at 64 KB too\n- the server answers `413` with `Connection: close`, since the rest of the body is never read\n- side fix: the body is decoded once at the end, so a multi-byte character split across chunks no longer turns into `\\uFFFD`\n\nTests cover both paths (declared length and a chunked 80 KB stream).",
  );
}

export function standup(r: SessionRecorder): void {
  r.user("Thanks! Give me a short summary of today for standup.");
  r.reply(
    "**tasktrack, today**\n\n" +
      "- **Released 0.4.0** (3 commits, not pushed): cursor pagination for `GET /tasks` (*breaking*: `{ items, nextCursor }`), token-bucket rate limiting (100/min per API key or IP, `429` + `Retry-After`), `ETag`/`304` on `GET /tasks/:id`, the fix for PATCH wiping titles, and the EADDRINUSE flake in CI (fixed test ports).\n" +
      "- **Since the release** (uncommitted): `GET /tasks` pages went from ~59 ms to ~5 µs with a sorted index, plus a `?done=` filter; stricter validation (titles 1–200 chars, typed PATCH, 400s that name the field); `/healthz` and graceful SIGTERM shutdown; JSON request logs with request ids and hashed API keys; a 64 KB body limit (`413`); Dockerfile (156 MB, non-root) and a GitHub Actions workflow for Node 20/22.\n" +
      "- **Needs others**: the dashboard must read `.items` before 0.4.0 is deployed; ops should point the load balancer health check at `/healthz`.\n" +
      "- **Next**: compile to `dist/` so the image can drop `tsx`; commit and tag the post-release work as 0.5.0.",
  );
}
