// Bundles the extension and the parts of bonsai it uses into one file, so the package installs
// with no dependencies at all: no native build, no database driver, no server. pi's own packages
// stay external (pi hands its copies to extensions); the database drivers are only loaded for
// database locations, which the extension never opens, so they stay external and absent.
import { copyFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));

/**
 * bonsai imports pi-ai lazily (`import("@mariozechner/pi-ai")`) so its CLI starts fast. Inside pi
 * that dynamic import would be resolved from wherever the package is installed, where pi-ai may
 * be absent; pi hands its own copy to extensions only through static imports. So in the bundle
 * the lazy import goes through a bundled bridge module that imports pi-ai statically.
 */
const piPackagesFromPi = {
  name: "pi-packages-from-pi",
  setup(build) {
    build.onResolve({ filter: /^@mariozechner\/pi-(ai|agent-core|tui|coding-agent)$/ }, (args) =>
      args.kind === "dynamic-import" ? { path: args.path, namespace: "pi-bridge" } : { path: args.path, external: true },
    );
    build.onLoad({ filter: /.*/, namespace: "pi-bridge" }, (args) => ({
      contents: `export * from ${JSON.stringify(args.path)};`,
      loader: "js",
      resolveDir: here,
    }));
  },
};
rmSync(join(here, "dist"), { recursive: true, force: true });
await build({
  entryPoints: [join(here, "src/index.ts")],
  outfile: join(here, "dist/index.js"),
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  external: ["better-sqlite3", "pg", "fastify"],
  plugins: [piPackagesFromPi],
  legalComments: "none",
  logLevel: "warning",
});
copyFileSync(join(here, "../../LICENSE"), join(here, "LICENSE"));
