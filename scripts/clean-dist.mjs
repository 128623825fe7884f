// Before the compiler: start from an empty dist/, so files of renamed or deleted modules (and old
// source maps) never reach the package.
import { rmSync } from "node:fs";

rmSync(new URL("../dist", import.meta.url), { recursive: true, force: true });
