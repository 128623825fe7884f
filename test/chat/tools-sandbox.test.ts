/**
 * The chat's bash tool says the truth about where it runs: in a bubblewrap sandbox (working
 * directory writable, the rest read-only, no network) when bwrap runs on this machine, and
 * otherwise unconfined with the user's rights. The argv given to bwrap is checked always; the
 * sandbox itself only where bwrap is installed and can run (skipped with the reason otherwise).
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer } from "node:net";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import { bwrapArgv, createChatTools, describeTools, detectSandbox, unsandboxedBashNotice } from "../../src/chat/tools.js";

let root: string;
let cwd: string;
let outside: string;

before(() => {
  root = mkdtempSync(join(tmpdir(), "bonsai-sandbox-"));
  cwd = join(root, "work");
  outside = join(root, "outside");
  mkdirSync(cwd);
  mkdirSync(outside);
});
after(() => rmSync(root, { recursive: true, force: true }));

const bash = (tools: AgentTool[]): AgentTool => tools.find((t) => t.name === "bash")!;
const run = async (tool: AgentTool, command: string) => {
  const result = await tool.execute("call_1", { command } as never);
  return (result.content[0] as { text: string }).text;
};

test("the argv for bwrap: / read-only, the working directory read-write, private /tmp, no network unless allowed, no capabilities", () => {
  assert.deepEqual(bwrapArgv("/home/u/proj", "make test"), [
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
    "--tmpfs",
    "/run",
    "--bind",
    "/home/u/proj",
    "/home/u/proj",
    "--chdir",
    "/home/u/proj",
    "--unshare-all",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--",
    "bash",
    "-c",
    "make test",
  ]);
  const withNet = bwrapArgv("/home/u/proj", "npm ci", true);
  assert.equal(withNet[withNet.indexOf("--unshare-all") + 1], "--share-net");
  assert.ok(withNet.indexOf("--tmpfs") < withNet.indexOf("--bind"), "the working directory is bound after /tmp, so one below /tmp stays visible");
});

test("without a sandbox, bash says it runs with the user's rights, and it does", async () => {
  const tools = createChatTools(cwd, { allowBash: true, sandbox: "off" });
  assert.equal(tools.sandbox, "none");
  assert.equal(tools.sandboxReason, "the sandbox was turned off");
  const description = bash(tools).description;
  assert.match(description, /NOT sandboxed \(the sandbox was turned off\): they run with the user's rights and can read and change anything the user can, anywhere/);
  assert.match(description, new RegExp(`only their starting directory is ${cwd}`));
  assert.match(describeTools(cwd, { allowBash: true, sandbox: "off" }), /read, write and edit work inside .* only; .*bash starts in .*NOT sandboxed/);
  // The description is the truth: an unsandboxed command reaches outside.
  await run(bash(tools), `echo reached > ${JSON.stringify(join(outside, "unsandboxed.txt"))}`);
  assert.equal(readFileSync(join(outside, "unsandboxed.txt"), "utf8"), "reached\n");
  // The chat says so on screen when it starts, not only to the model.
  assert.equal(unsandboxedBashNotice(tools), "--allow-bash: no sandbox (the sandbox was turned off): the model's bash commands run with your rights, anywhere on this machine");
  // With no bash, nothing claims a sandbox, and there is nothing to warn of.
  assert.equal(createChatTools(cwd).sandbox, "none");
  assert.equal(unsandboxedBashNotice(createChatTools(cwd)), undefined);
  assert.equal(describeTools(cwd), `You can use the tools read, write, edit. They work inside ${cwd} only; give paths relative to it.`);
});

test("bwrap missing, or present but unable to run here, means no sandbox, with the reason", () => {
  const empty = join(root, "empty-bin");
  mkdirSync(empty);
  if (process.platform === "linux") {
    assert.deepEqual(detectSandbox(cwd, { env: { PATH: empty } }), { kind: "none", reason: "bubblewrap (bwrap) is not installed", network: true });
  }
  const broken = join(root, "broken-bin");
  mkdirSync(broken);
  writeFileSync(join(broken, "bwrap"), "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n");
  chmodSync(join(broken, "bwrap"), 0o755);
  const found = detectSandbox(cwd, { env: { PATH: `${broken}:/usr/bin:/bin` } });
  assert.equal(found.kind, "none");
  if (process.platform === "linux") assert.equal(found.reason, "bwrap cannot run here: bwrap: No permissions to create new namespace");
});

test("in the bubblewrap sandbox: the working directory is writable, the rest read-only (even for root), no network", async (t) => {
  const found = detectSandbox(cwd);
  if (found.kind !== "bubblewrap") {
    // CI installs bubblewrap and sets this, so there the sandbox is tested, never skipped
    if (process.env.BONSAI_TEST_REQUIRE_SANDBOX === "1") assert.fail(`no bubblewrap sandbox here, where one is required: ${found.reason}`);
    t.skip(found.reason === "bubblewrap (bwrap) is not installed" ? "bubblewrap not installed" : found.reason);
    return;
  }
  // Outside the working directory and not below /tmp (the sandbox's /tmp is its own): visible, read-only.
  const elsewhere = mkdtempSync(join(existsSync("/var/tmp") ? "/var/tmp" : root, "bonsai-sandbox-"));
  t.after(() => rmSync(elsewhere, { recursive: true, force: true }));
  writeFileSync(join(elsewhere, "kept.txt"), "kept");
  const tools = createChatTools(cwd, { allowBash: true });
  assert.equal(tools.sandbox, "bubblewrap");
  assert.equal(unsandboxedBashNotice(tools), undefined, "a sandboxed bash needs no warning");
  const tool = bash(tools);
  assert.match(tool.description, /bubblewrap sandbox: .* is writable, the rest of the filesystem is read-only, \/tmp is private and starts empty, and there is no network/);
  assert.equal((await run(tool, "pwd")).trim(), cwd);
  await run(tool, "echo inside > made.txt && mkdir -p sub && echo x > /tmp/scratch && cat /tmp/scratch");
  assert.equal(readFileSync(join(cwd, "made.txt"), "utf8"), "inside\n");
  assert.equal(await run(tool, `cat ${JSON.stringify(join(elsewhere, "kept.txt"))}`), "kept", "the rest can be read");
  await assert.rejects(run(tool, `echo pwned > ${JSON.stringify(join(elsewhere, "kept.txt"))}`), /Read-only file system[\s\S]*exit code 1/);
  await assert.rejects(run(tool, `touch ${JSON.stringify(join(elsewhere, "new.txt"))}`), /Read-only file system/);
  // Root in the sandbox must not be able to make the read-only binds writable again.
  await assert.rejects(run(tool, `mount -o remount,bind,rw / ; echo pwned > ${JSON.stringify(join(elsewhere, "kept.txt"))}`), /Read-only file system/);
  assert.match(await run(tool, "grep CapEff /proc/self/status"), /CapEff:\s+0+\n/, "no capabilities");
  assert.equal(readFileSync(join(elsewhere, "kept.txt"), "utf8"), "kept");
  assert.equal(existsSync(join(elsewhere, "new.txt")), false);
  assert.equal(existsSync("/tmp/scratch"), false, "the sandbox's /tmp is its own");
  // a host daemon's Unix socket under /run is out of reach (issue 26, defect 5)
  const socketPath = `/run/bonsai-sandbox-test-${process.pid}.sock`;
  const daemon = createServer().listen(socketPath);
  await once(daemon, "listening");
  t.after(() => daemon.close());
  assert.equal(existsSync(socketPath), true);
  assert.equal((await run(tool, `test -S ${socketPath} && echo reachable || echo hidden`)).trim(), "hidden");
  const interfaces = await run(tool, "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '");
  assert.equal(interfaces.trim(), "lo", "only loopback: no network");
  // a timeout still kills the sandboxed command
  const started = Date.now();
  await assert.rejects(tool.execute("call_2", { command: "sleep 5", timeout: 1 } as never), /killed after 1 s \(timeout\)/);
  assert.ok(Date.now() - started < 4000);
});
