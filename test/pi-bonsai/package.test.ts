/**
 * The packed pi package, as a user gets it: `npm pack`, installed into an empty folder with npm
 * (offline: it has no dependencies to fetch), holds no native build and none of bonsai's
 * database drivers or server, and pi loads it from there and compacts through it.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { buildPiBonsai, PI_BONSAI_DIR } from "../helpers/pi-bonsai-build.js";
import { startPiAgent } from "../helpers/pi-agent.js";
import { type ScriptedServer, startScriptedServer, systemText } from "../helpers/sse-server.js";

const npm = process.platform === "win32" ? "npm.cmd" : "npm";

/** Every package folder under node_modules (scoped ones included). */
function installedPackages(nodeModules: string): string[] {
  if (!existsSync(nodeModules)) return [];
  const names: string[] = [];
  for (const name of readdirSync(nodeModules)) {
    if (name.startsWith(".")) continue;
    if (name.startsWith("@")) for (const inner of readdirSync(join(nodeModules, name))) names.push(`${name}/${inner}`);
    else names.push(name);
  }
  return names;
}

describe("the packed pi package", () => {
  let root: string;
  let server: ScriptedServer;

  before(async () => {
    buildPiBonsai();
    root = mkdtempSync(join(tmpdir(), "pi-bonsai-pack-"));
    server = await startScriptedServer((request) =>
      /summar|condense recorded conversations/i.test(systemText(request))
        ? { text: "## Goal\nKeep the cache warm.\n" }
        : { text: `noted: ${Array.from({ length: 80 }, (_, i) => `line ${i} of the answer`).join("\n")}` },
    );
  });
  after(async () => {
    await server.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("installs with no dependencies at all and pi compacts through it", async () => {
    const packed = execFileSync(npm, ["pack", "--silent", "--pack-destination", root], { cwd: PI_BONSAI_DIR, encoding: "utf8" }).trim().split("\n").at(-1) as string;
    const project = join(root, "install");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "empty", version: "1.0.0", private: true }));
    execFileSync(npm, ["install", "--offline", "--no-audit", "--no-fund", join(root, packed)], { cwd: project, stdio: "pipe" });

    const nodeModules = join(project, "node_modules");
    assert.deepEqual(installedPackages(nodeModules), ["pi-bonsai"], "nothing but the package itself is installed");
    const installed = join(nodeModules, "pi-bonsai");
    const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));
    assert.deepEqual(manifest.pi, { extensions: ["./dist/index.js"] });
    assert.equal(manifest.dependencies, undefined);
    assert.equal(existsSync(join(installed, "build")), false, "no native build");
    const bundle = readFileSync(join(installed, "dist", "index.js"), "utf8");
    for (const heavy of ["fastify", "libsql", "pg"]) {
      assert.equal(existsSync(join(nodeModules, heavy)), false, `${heavy} is not installed`);
    }
    assert.doesNotMatch(bundle, /from "fastify"/, "the server is not in the bundle");

    const pi = await startPiAgent({ root: join(root, "pi"), baseUrl: server.baseUrl, packageDir: installed });
    try {
      await pi.session.prompt("Keep the build cache warm between CI runs; never clear it on main.");
      await pi.session.prompt("Check the cache key.");
      await pi.session.prompt("And the restore step.");
      await pi.session.prompt("Then the save step.");
      const result = await pi.session.compact();
      assert.deepEqual(pi.extensionErrors, [], "the extension's handlers threw (pi compacted by itself)");
      assert.match(result.summary, /Keep the build cache warm between CI runs; never clear it on main\./);
      assert.equal((result.details as { method?: string }).method, "model");
    } finally {
      pi.dispose();
    }
  });
});
