import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type HookError, HookRunner } from "../../src/agent/hooks.js";

type Events = {
  before: { payload: { n: number }; result: { cancel?: boolean; value?: string } };
  after: { payload: { n: number }; result: undefined };
};

describe("HookRunner", () => {
  test("runs handlers in registration order with the payload and a signal", async () => {
    const runner = new HookRunner<Events>();
    const seen: string[] = [];
    runner.on("after", (e) => {
      seen.push(`a${e.n}`);
      assert.ok(e.signal instanceof AbortSignal);
    });
    runner.on("after", async (e) => {
      await new Promise((r) => setTimeout(r, 5));
      seen.push(`b${e.n}`);
    });
    runner.on("after", (e) => {
      seen.push(`c${e.n}`);
    });
    await runner.run("after", { n: 1 });
    assert.deepEqual(seen, ["a1", "b1", "c1"]);
  });

  test("the last truthy result wins", async () => {
    const runner = new HookRunner<Events>();
    runner.on("before", () => ({ value: "first" }));
    runner.on("before", () => ({ value: "second" }));
    runner.on("before", () => undefined);
    assert.deepEqual(await runner.run("before", { n: 0 }), { value: "second" });
  });

  test("cancel short-circuits the remaining handlers", async () => {
    const runner = new HookRunner<Events>();
    let laterRan = false;
    runner.on("before", () => ({ value: "x" }));
    runner.on("before", () => ({ cancel: true }));
    runner.on("before", () => {
      laterRan = true;
      return { value: "late" };
    });
    assert.deepEqual(await runner.run("before", { n: 0 }), { cancel: true });
    assert.equal(laterRan, false);
  });

  test("a throwing or rejecting handler is reported and skipped", async () => {
    const errors: HookError[] = [];
    const runner = new HookRunner<Events>({ onError: (e) => errors.push(e) });
    runner.on("before", () => ({ value: "kept" }));
    runner.on("before", () => {
      throw new Error("boom");
    });
    runner.on("before", async () => Promise.reject(new Error("async boom")));
    assert.deepEqual(await runner.run("before", { n: 0 }), { value: "kept" });
    assert.deepEqual(
      errors.map((e) => [e.event, e.index, (e.error as Error).message]),
      [
        ["before", 1, "boom"],
        ["before", 2, "async boom"],
      ],
    );
  });

  test("handlers receive the caller's signal", async () => {
    const runner = new HookRunner<Events>();
    const controller = new AbortController();
    let got: AbortSignal | undefined;
    runner.on("before", (e) => {
      got = e.signal;
    });
    await runner.run("before", { n: 0 }, controller.signal);
    assert.equal(got, controller.signal);
  });

  test("unregister removes only that handler; hasHandlers follows", async () => {
    const runner = new HookRunner<Events>();
    assert.equal(runner.hasHandlers("before"), false);
    const off = runner.on("before", () => ({ value: "a" }));
    runner.on("before", () => undefined);
    assert.equal(runner.hasHandlers("before"), true);
    off();
    assert.equal(await runner.run("before", { n: 0 }), undefined);
    off();
    assert.equal(runner.hasHandlers("before"), true);
  });

  test("a handler removing itself while running does not skip the next", async () => {
    const runner = new HookRunner<Events>();
    const seen: string[] = [];
    const off = runner.on("after", () => {
      seen.push("self");
      off();
    });
    runner.on("after", () => {
      seen.push("next");
    });
    await runner.run("after", { n: 0 });
    await runner.run("after", { n: 0 });
    assert.deepEqual(seen, ["self", "next", "next"]);
  });
});

describe("HookRunner.collect", () => {
  test("returns every truthy result in order, skipping throwing handlers", async () => {
    const errors: HookError[] = [];
    const runner = new HookRunner<Events>({ onError: (e) => errors.push(e) });
    runner.on("before", () => ({ value: "a" }));
    runner.on("before", () => undefined);
    runner.on("before", () => {
      throw new Error("bad");
    });
    runner.on("before", () => ({ cancel: true }));
    runner.on("before", async () => ({ value: "b" }));
    assert.deepEqual(await runner.collect("before", { n: 0 }), [{ value: "a" }, { cancel: true }, { value: "b" }]);
    assert.equal(errors.length, 1);
    assert.equal(errors[0].index, 2);
  });
});
