/**
 * Which bonsai is running: the package's version, and the git commit when it runs from a checkout
 * (`bonsai eval` pins both in its report). Read once per call; a missing package.json or git is not
 * an error, only an unknown.
 */
import { execFileSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";

const PACKAGE_JSON = new URL("../../package.json", import.meta.url);

export { packageVersion } from "../util/package-version.js";

/**
 * The commit of the checkout bonsai runs from, "+" marking uncommitted changes, or undefined: an
 * installed package (in node_modules, maybe inside the user's own repository, whose commit is not
 * bonsai's), or no git.
 */
export function gitCommit(): string | undefined {
  const root = fileURLToPath(new URL(".", PACKAGE_JSON)).replace(/\/$/, "");
  const git = (...args: string[]) =>
    execFileSync("git", args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 2000 }).trim();
  try {
    // only when the package's folder is the repository's root
    if (realpathSync(git("rev-parse", "--show-toplevel")) !== realpathSync(root)) return undefined;
    const commit = git("rev-parse", "HEAD");
    if (!/^[0-9a-f]{40}$/.test(commit)) return undefined;
    return git("status", "--porcelain", "--untracked-files=no") === "" ? commit : `${commit}+`;
  } catch {
    return undefined;
  }
}
