/** `bonsai view` as a user runs it: the address printed, the page served, --open without a browser, Ctrl-C. */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { ROOT } from "../helpers/cli.js";
import { tempDir } from "../helpers/session-builders.js";
import { EXAMPLE } from "../helpers/view-sessions.js";
import { BONSAI_ARGS } from "../helpers/bonsai-bin.js";

describe("bonsai view", () => {
  it("prints its address, serves the page, warns in one line when no browser can be opened, and stops on Ctrl-C", async () => {
    // a PATH with node only: xdg-open (or open) is not found
    const { dir, cleanup } = tempDir();
    after(cleanup);
    symlinkSync(process.execPath, join(dir, "node"));
    const child = spawn(process.execPath, [...BONSAI_ARGS, "view", EXAMPLE, "--open", "--context-window", "200000"], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: "1", PATH: dir },
    });
    let stdout = "";
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (d) => {
        stdout += d;
        const match = /^bonsai view: (http:\/\/127\.0\.0\.1:\d+\/) \(read-only; Ctrl-C stops it\)\n$/.exec(stdout);
        if (match) resolve(match[1]);
      });
      child.on("exit", (code) => reject(new Error(`exited with ${code}: ${stderr}`)));
    });
    const page = await (await fetch(url)).text();
    assert.match(page, /<body data-mode="live">/);
    await new Promise((r) => setTimeout(r, 300));
    assert.match(stderr, /^warning: could not open a browser \((xdg-)?open: spawn (xdg-)?open ENOENT\); open http:\/\/127\.0\.0\.1:\d+\/ yourself\n$/);
    const code = await new Promise<number | null>((done) => {
      child.on("exit", (c) => done(c));
      child.kill("SIGINT");
    });
    assert.equal(code, 0);
  });

  it("refuses a port out of range as a usage error", async () => {
    const child = spawn(process.execPath, [...BONSAI_ARGS, "view", EXAMPLE, "--port", "70000"], { cwd: ROOT });
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const code = await new Promise<number | null>((done) => child.on("exit", (c) => done(c)));
    assert.equal(code, 2);
    assert.match(stderr, /must be a port from 0 to 65535/);
  });
});
