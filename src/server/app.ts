/**
 * `bonsai serve`: the remote summarization endpoint. POST `{systemPrompt, prompt, maxTokens?}`
 * to `/summarize` (or `/`, or `/t/TOKEN/summarize` for clients that send no Authorization header),
 * get `{summary, shortSummary?, model, usage?}`. Stateless: every
 * request carries all it needs, so instances scale out behind any load balancer.
 *
 * buildServer() wires routes, limits and logs and never listens, so tests can inject requests;
 * startServer() listens and shuts down gracefully on SIGTERM/SIGINT.
 */
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { assertSafeBinding, bearerMatches, pathToken, printablePath, tokenMatches } from "./auth.js";
import { parseRequestJson, RequestJsonError } from "./request-json.js";
import { createConcurrencyGate, DEFAULT_LIMITS } from "./limits.js";
import { levelFor, type LogSink, logLine, oneLineReason, type RequestLog, stdoutSink } from "./logging.js";
import type { RemoteRequestBody } from "../summarizer/remote.js";
import { SummarizationAbortedError, type SummarizeRequest, type Summarizer } from "../summarizer/types.js";
import { errorText } from "../util/error-text.js";

export interface ServerOptions {
  summarizer: Summarizer;
  /** bearer token every summarization request must carry; none means open (loopback only) */
  token?: string;
  maxBodyBytes?: number;
  maxConcurrent?: number;
  requestTimeoutMs?: number;
  /** used when a request does not say (default 8192) */
  defaultMaxTokens?: number;
  log?: LogSink;
}

const PURPOSES: ReadonlySet<string> = new Set(["history", "turn-prefix", "short", "branch", "merge"]);
const DEFAULT_MAX_TOKENS = 8192;

/** An accepted body is exactly what the remote summarizer client sends. */
type ValidBody = RemoteRequestBody;

/** The request body, or the one-line reason it is not acceptable. */
export function validateBody(body: unknown): ValidBody | string {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return "body must be a JSON object: send {systemPrompt, prompt} as application/json";
  const b = body as Record<string, unknown>;
  if (typeof b.systemPrompt !== "string") return "systemPrompt must be a string";
  if (typeof b.prompt !== "string") return "prompt must be a string";
  if (!b.prompt.trim()) return "prompt is empty";
  if (b.maxTokens !== undefined && (typeof b.maxTokens !== "number" || !Number.isInteger(b.maxTokens) || b.maxTokens < 1)) {
    return "maxTokens must be a positive integer";
  }
  if (b.purpose !== undefined && (typeof b.purpose !== "string" || !PURPOSES.has(b.purpose))) {
    return `purpose must be one of ${[...PURPOSES].join(", ")}`;
  }
  return {
    systemPrompt: b.systemPrompt,
    prompt: b.prompt,
    maxTokens: b.maxTokens as number | undefined,
    purpose: b.purpose as SummarizeRequest["purpose"] | undefined,
  };
}

/**
 * Clients of the upstream protocol send no purpose. Their short-summary prompt asks for a few
 * sentences; everything else is a history summary.
 */
export function inferPurpose(prompt: string): SummarizeRequest["purpose"] {
  const tail = prompt.slice(prompt.lastIndexOf(">") + 1);
  return /\b(?:2|two)\s*(?:-|–|to|or)\s*(?:3|three)\s+sentences?\b/i.test(tail) ? "short" : "history";
}

const fail = (reply: FastifyReply, status: number, error: string) => reply.code(status).send({ error });

export function buildServer(options: ServerOptions): FastifyInstance {
  const { summarizer, token } = options;
  const log = options.log ?? stdoutSink;
  const timeoutMs = options.requestTimeoutMs ?? DEFAULT_LIMITS.requestTimeoutMs;
  const gate = createConcurrencyGate(options.maxConcurrent ?? DEFAULT_LIMITS.maxConcurrent);
  const app = Fastify({
    logger: false,
    bodyLimit: options.maxBodyBytes ?? DEFAULT_LIMITS.maxBodyBytes,
    return503OnClosing: true,
    forceCloseConnections: "idle",
  });
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
    try {
      done(null, parseRequestJson(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  const details = new WeakMap<FastifyRequest, Partial<RequestLog>>();
  const logged = new WeakSet<FastifyRequest>();
  const logRequest = (request: FastifyRequest, status: number, ms: number) => {
    if (logged.has(request)) return;
    logged.add(request);
    const entry: RequestLog = { reqId: request.id, method: request.method, path: printablePath(request.url, options.token), status, ms, ...details.get(request) };
    log(logLine(levelFor(status), "request", entry));
  };

  // Graceful shutdown: stop accepting, let every request in progress finish, then drop the
  // connections left (idle keep-alive sockets, or sockets that never sent a request), which
  // would otherwise hold the close open until their timeouts.
  let closing = false;
  let active = 0;
  const dropConnectionsWhenDrained = () => {
    if (closing && active === 0) setImmediate(() => app.server.closeAllConnections());
  };
  app.addHook("preClose", async () => {
    closing = true;
    dropConnectionsWhenDrained();
  });
  // While draining, answers close their connection: an idle keep-alive socket would otherwise
  // hold the shutdown open until its timeout.
  app.addHook("onSend", async (_request, reply) => {
    if (closing) reply.header("connection", "close");
  });

  // Before the body is read: an unauthenticated client never gets 8 MB parsed on its behalf.
  app.addHook("onRequest", async (request, reply) => {
    active++;
    reply.raw.once("close", () => {
      active--;
      dropConnectionsWhenDrained();
    });
    const inPath = pathToken(request.url);
    if (inPath !== undefined && !token) {
      return fail(reply, 404, "this server has no token, so it has no /t/<token>/ routes: POST /summarize");
    }
    if (!token || request.method !== "POST") return;
    if (inPath !== undefined) {
      if (!tokenMatches(inPath, token)) return fail(reply, 401, "invalid token in the path");
      return;
    }
    if (!bearerMatches(request.headers.authorization, token)) {
      reply.header("www-authenticate", 'Bearer realm="bonsai"');
      return fail(reply, 401, request.headers.authorization ? "invalid bearer token" : "missing bearer token: send Authorization: Bearer <token>");
    }
  });

  app.addHook("onResponse", async (request, reply) => logRequest(request, reply.statusCode, Math.round(reply.elapsedTime)));

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    let reason = status === 500 ? "internal server error" : oneLineReason(error.message);
    if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE") reason = `request body exceeds the limit of ${app.initialConfig.bodyLimit} bytes`;
    else if (error.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") reason = "send the body as application/json";
    else if (error.code === "FST_ERR_CTP_EMPTY_JSON_BODY") reason = "body is empty: send {systemPrompt, prompt}";
    else if (error.code === "FST_ERR_CTP_INVALID_JSON_BODY") reason = "malformed JSON body: send {systemPrompt, prompt}";
    else if (error instanceof RequestJsonError) reason = error.message;
    else if (status === 400 && error instanceof SyntaxError) reason = `malformed JSON body: ${oneLineReason(error.message)}`;
    details.set(request, { ...details.get(request), error: status === 500 ? oneLineReason(error.message) : reason });
    return fail(reply, status, reason);
  });

  app.setNotFoundHandler((request, reply) => fail(reply, 404, `no route ${request.method} ${printablePath(request.url, options.token)}: POST /summarize`));

  app.get("/healthz", async (_request, reply) => {
    if (closing) return reply.code(503).send({ status: "draining" });
    return { status: "ok", inFlight: gate.inFlight, capacity: gate.capacity };
  });

  const summarize = async (request: FastifyRequest, reply: FastifyReply) => {
    const body = validateBody(request.body);
    if (typeof body === "string") {
      details.set(request, { error: body });
      return fail(reply, 400, body);
    }
    const purpose = body.purpose ?? inferPurpose(body.prompt);
    const maxTokens = body.maxTokens ?? options.defaultMaxTokens ?? DEFAULT_MAX_TOKENS;
    const info: Partial<RequestLog> = { promptChars: body.prompt.length, maxTokens, purpose };
    details.set(request, info);

    const release = gate.tryAcquire();
    if (!release) {
      info.error = "too many concurrent summarizations";
      reply.header("retry-after", String(gate.retryAfterSeconds()));
      return fail(reply, 429, `the server is busy (${gate.capacity} summarizations in progress): retry later`);
    }

    const controller = new AbortController();
    let timedOut = false;
    let clientClosed = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    // The response stream closes before it finished only when the client went away.
    const onClose = () => {
      if (!reply.raw.writableFinished) {
        clientClosed = true;
        info.clientClosed = true;
        controller.abort();
      }
    };
    reply.raw.on("close", onClose);
    // Answer at the deadline even if the summarizer ignores its signal; its slot stays taken
    // until it really stops, so the concurrency bound holds.
    const deadline = new Promise<never>((_resolve, reject) => {
      controller.signal.addEventListener("abort", () => reject(new SummarizationAbortedError()), { once: true });
    });
    const work = summarizer.summarize({
      systemPrompt: body.systemPrompt,
      prompt: body.prompt,
      maxTokens,
      purpose,
      signal: controller.signal,
    });
    work.then(release, release);
    try {
      const result = await Promise.race([work, deadline]);
      info.summaryChars = result.text.length;
      info.model = result.model ?? summarizer.name;
      if (result.usage) {
        info.inputTokens = result.usage.input;
        info.outputTokens = result.usage.output;
      }
      return reply.send({
        summary: result.text,
        ...(result.shortSummary ? { shortSummary: result.shortSummary } : {}),
        model: info.model,
        ...(result.usage ? { usage: result.usage } : {}),
      });
    } catch (error) {
      if (timedOut) {
        info.error = "timed out";
        return fail(reply, 504, `summarization took longer than ${Math.round(timeoutMs / 1000)} s and was stopped`);
      }
      if (clientClosed) {
        info.error = "client closed the connection";
        // Nobody is left to answer, and fastify logs no response for a closed socket: log it here.
        logRequest(request, 499, Math.round(reply.elapsedTime));
        return fail(reply, 499, "client closed the connection");
      }
      const reason = oneLineReason(errorText(error));
      // a provider's error can quote the prompt back: the log keeps only what kind of failure it was
      info.error = `the summarizer failed (${error instanceof Error ? error.name : typeof error})`;
      if (error instanceof SummarizationAbortedError) return fail(reply, 503, `summarization was cancelled: ${reason}`);
      return fail(reply, 502, `the summarizer failed: ${reason}`);
    } finally {
      clearTimeout(timer);
      reply.raw.off("close", onClose);
      work.catch(() => {}); // a summarizer that fails after the deadline must not crash the process
    }
  };

  // Each summarize route, also with the token in the path (onRequest checked it). Another method on
  // one of them is a 405 naming the one that works, not a 404 that suggests the route is not there.
  for (const url of ["/summarize", "/", "/t/:token/summarize", "/t/:token/"]) {
    app.post(url, summarize);
    app.route({
      method: ["GET", "PUT", "PATCH", "DELETE"],
      url,
      handler: (request, reply) => {
        void reply.header("allow", "POST");
        return fail(reply, 405, `${request.method} is not allowed here: POST /summarize with {systemPrompt, prompt}`);
      },
    });
  }
  return app;
}

export interface StartOptions extends ServerOptions {
  host?: string;
  port?: number;
  /** install SIGTERM/SIGINT handlers that drain and close (the CLI does; tests may not) */
  handleSignals?: boolean;
  /** longest wait for in-flight requests at shutdown before forcing the exit */
  drainTimeoutMs?: number;
}

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  close(): Promise<void>;
}

export async function startServer(options: StartOptions): Promise<RunningServer> {
  const host = options.host ?? "127.0.0.1";
  assertSafeBinding(host, options.token);
  const log = options.log ?? stdoutSink;
  const app = buildServer({ ...options, log });
  const address = await app.listen({ host, port: options.port ?? 8787 });
  const url = address.replace(/\/$/, "");
  log(
    logLine("info", "listening", {
      url,
      summarizer: options.summarizer.name,
      auth: options.token ? "bearer" : "none",
      maxConcurrent: options.maxConcurrent ?? DEFAULT_LIMITS.maxConcurrent,
      requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_LIMITS.requestTimeoutMs,
      maxBodyBytes: options.maxBodyBytes ?? DEFAULT_LIMITS.maxBodyBytes,
    }),
  );
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= app.close().then(() => log(logLine("info", "stopped", {})));
    return closing;
  };
  if (options.handleSignals) {
    const drainMs = options.drainTimeoutMs ?? (options.requestTimeoutMs ?? DEFAULT_LIMITS.requestTimeoutMs) + 5000;
    const onSignal = (signal: NodeJS.Signals) => {
      log(logLine("info", "shutdown", { signal, note: "finishing in-flight requests" }));
      // A second signal, or a drain that outlives every request's own timeout, forces the exit.
      const force = setTimeout(() => {
        log(logLine("error", "shutdown", { note: `in-flight requests still running after ${drainMs} ms: exiting` }));
        process.exit(1);
      }, drainMs);
      force.unref();
      process.once("SIGTERM", () => process.exit(1));
      process.once("SIGINT", () => process.exit(1));
      close().then(
        () => clearTimeout(force),
        () => process.exit(1),
      );
    };
    process.once("SIGTERM", onSignal);
    process.once("SIGINT", onSignal);
  }
  return { app, url, close };
}
