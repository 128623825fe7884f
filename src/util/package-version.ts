/** bonsai's version, from its package.json; "0.0.0" when that cannot be read (not an error, only an unknown). */
import { readFileSync } from "node:fs";

const PACKAGE_JSON = new URL("../../package.json", import.meta.url);

export function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(PACKAGE_JSON, "utf8")) as { version?: string };
    return pkg.version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}
