/**
 * Which bonsai is running: the package's version, and the git commit when it runs from a checkout
 * (`bonsai eval` pins both in its report). Read once per call; a missing package.json or git is not
 * an error, only an unknown.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const PACKAGE_JSON = new URL("../../package.json", import.meta.url);

export function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(PACKAGE_JSON, "utf8")) as { version?: string };
    return pkg.version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}

/** The commit of the checkout bonsai runs from, or undefined (an installed package, no git). */
export function gitCommit(): string | undefined {
  try {
    const out = execFileSync("git", ["rev-parse", "HEAD"], { cwd: fileURLToPath(new URL(".", PACKAGE_JSON)), encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 2000 });
    return /^[0-9a-f]{40}$/.test(out.trim()) ? out.trim() : undefined;
  } catch {
    return undefined;
  }
}
