/**
 * From an audit on a full disk: an export that cannot be written leaves the page that was there
 * whole and names the file, a prune whose archive cannot be written leaves no torn archive, and a
 * cache that cannot be closed never breaks the open it was for.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { join, resolve } from "node:path";
import { after, describe, it, mock } from "node:test";
import { buildProgram } from "../../src/cli/program.js";
import { prunedArchivePath, pruneSession } from "../../src/ops/prune.js";
import { SessionManager } from "../../src/session/manager.js";
import { writeCacheFile } from "../../src/storage/open-index-file.js";
import { oddSessionLines, PRUNE_ONE } from "../helpers/odd-session.js";
import { tempDir } from "../helpers/session-builders.js";

const temp = tempDir();
after(temp.cleanup);
const cjsFs = createRequire(import.meta.url)("node:fs") as typeof import("node:fs");
const full = () => Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
const EXAMPLE = resolve(import.meta.dirname, "../../examples/coding-session.jsonl");

describe("a full disk", () => {
  it("export -o: the page that was there stays whole, and the error names the file", async () => {
    const out = join(temp.dir, "page.html");
    fs.writeFileSync(out, "the page of yesterday");
    const real = cjsFs.writeSync;
    let written = 0;
    mock.method(cjsFs, "writeSync", (fd: number, buffer: Buffer, offset: number, length: number, ...rest: unknown[]) => {
      // the first 32 KB go, then the disk is full
      if (written > 32 << 10) throw full();
      const n = (real as (...a: unknown[]) => number)(fd, buffer, offset, Math.min(length, 1 << 12), ...rest);
      written += n;
      return n;
    });
    syncBuiltinESMExports();
    const errors: string[] = [];
    mock.method(process.stderr, "write", (text: string) => {
      errors.push(String(text));
      return true;
    });
    const exitCode = process.exitCode;
    try {
      await buildProgram().parseAsync(["node", "bonsai", "export", EXAMPLE, "--html", "-o", out]);
    } finally {
      mock.restoreAll();
      syncBuiltinESMExports();
    }
    const failed = process.exitCode;
    process.exitCode = exitCode;
    assert.equal(failed, 1);
    assert.equal(fs.readFileSync(out, "utf8"), "the page of yesterday");
    assert.match(errors.join(""), new RegExp(`cannot write ${out.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: ENOSPC`));
    assert.deepEqual(fs.readdirSync(temp.dir).filter((f) => f.endsWith(".tmp")), [], "no temp file left");
  });

  it("a prune whose new archive cannot be written leaves neither a torn archive nor a changed session", async () => {
    const file = join(temp.dir, "prune.jsonl");
    fs.writeFileSync(file, `${oddSessionLines().join("\n")}\n`);
    const before = fs.readFileSync(file);
    const session = SessionManager.open(file);
    const real = cjsFs.writeSync;
    mock.method(cjsFs, "writeSync", (fd: number, buffer: Buffer, offset: number, length: number, ...rest: unknown[]) => {
      // the archive's records: half of them go, then the disk is full
      if (Buffer.isBuffer(buffer) && buffer.includes('"entryId"')) {
        (real as (...a: unknown[]) => number)(fd, buffer, offset, Math.floor(length / 2), ...rest);
        throw full();
      }
      return (real as (...a: unknown[]) => number)(fd, buffer, offset, length, ...rest);
    });
    syncBuiltinESMExports();
    try {
      assert.throws(() => pruneSession(session, { config: PRUNE_ONE, now: 1000 }), /ENOSPC/);
    } finally {
      mock.restoreAll();
      syncBuiltinESMExports();
      await session.close();
    }
    assert.equal(fs.existsSync(prunedArchivePath(file)), false, "no archive, torn or empty");
    assert.ok(fs.readFileSync(file).equals(before), "the session as it was");
  });

  it("a cache whose close fails is given up quietly, with no temp file left", () => {
    const dir = join(temp.dir, "cache");
    const where = join(dir, "x.json");
    const realClose = cjsFs.closeSync;
    let failed = false;
    mock.method(cjsFs, "closeSync", (fd: number) => {
      realClose(fd); // released, then reported as failed: what a quota at close on NFS does
      if (!failed) {
        failed = true;
        throw Object.assign(new Error("EIO: i/o error, close"), { code: "EIO" });
      }
    });
    syncBuiltinESMExports();
    try {
      assert.doesNotThrow(() => writeCacheFile(where, new Uint8Array([1, 2, 3])));
    } finally {
      mock.restoreAll();
      syncBuiltinESMExports();
    }
    assert.ok(failed);
    assert.deepEqual(fs.readdirSync(dir), [], "neither the cache nor its temp file");
  });
});
