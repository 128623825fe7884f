// The compiler writes the CLI entry without the execute bit; npm's bin link needs it.
import { chmodSync, existsSync } from "node:fs";

const bin = new URL("../dist/cli/main.js", import.meta.url);
if (existsSync(bin)) chmodSync(bin, 0o755);
