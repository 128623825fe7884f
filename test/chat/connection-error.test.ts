/**
 * Issue 19, item 5: a connection error names the URL that could not be reached and why. The cause
 * comes from the failed fetch itself (the provider SDK keeps only "Connection error.").
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { connectionErrorText, FetchFailures, isConnectionError, networkCause } from "../../src/chat/connection-error.js";
import { refusedPort } from "../helpers/refused-port.js";

test("connection errors are recognized by their message, and other errors are not", () => {
  for (const message of ["Connection error.", "fetch failed", "connect ECONNREFUSED 127.0.0.1:9", "getaddrinfo ENOTFOUND nohost"]) {
    assert.equal(isConnectionError(message), true, message);
  }
  for (const message of ["429 Too Many Requests", "context length exceeded", ""]) assert.equal(isConnectionError(message), false, message);
});

test("the cause is read from the error chain of a failed fetch", () => {
  const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" });
  assert.equal(networkCause(new TypeError("fetch failed", { cause: refused })), "connection refused (ECONNREFUSED): nothing listens at that address");
  const noHost = Object.assign(new Error("getaddrinfo ENOTFOUND nohost"), { code: "ENOTFOUND" });
  assert.equal(networkCause(new Error("Connection error.", { cause: new TypeError("fetch failed", { cause: noHost }) })), "no such host (ENOTFOUND)");
  assert.equal(networkCause(new Error("plain")), undefined);
  assert.equal(networkCause(new TypeError("fetch failed", { cause: new Error("bad port") })), "bad port");
  assert.equal(connectionErrorText("http://h:9/v1", undefined), "cannot reach http://h:9/v1");
});

test("FetchFailures remembers why a fetch to a server failed, by origin", async () => {
  const port = await refusedPort();
  const failures = new FetchFailures();
  const restore = failures.install();
  try {
    await assert.rejects(fetch(`http://127.0.0.1:${port}/v1/chat/completions`, { method: "POST", body: "{}" }));
  } finally {
    restore();
  }
  assert.match(failures.causeFor(`http://127.0.0.1:${port}/v1`) ?? "", /^connection refused \(ECONNREFUSED\)/);
  assert.equal(failures.causeFor("http://elsewhere:1/v1"), undefined);
});
