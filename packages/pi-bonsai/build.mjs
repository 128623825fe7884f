// Bundles the extension and the parts of bonsai it uses into one file, so the package installs
// with no dependencies at all: no native build, no database driver, no server. pi's own packages
// stay external (pi hands its copies to extensions); the database drivers are only loaded for
// database locations, which the extension never opens, so they stay external and absent.
import { copyFileSync, mkdirSync, renameSync, rmSync } from "node:fs";
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
// Each output is written beside its place and renamed over it, so that a test or a `pi` reading the
// package while another build runs (test files build it concurrently) sees the old file or the new
// one, never a half-written or missing one.
const dist = join(here, "dist");
mkdirSync(dist, { recursive: true });
const temp = `.index.js.${process.pid}-${Date.now()}.tmp`;
try {
  await build({
    entryPoints: [join(here, "src/index.ts")],
    outfile: join(dist, temp),
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: ["libsql", "pg", "fastify"],
    plugins: [piPackagesFromPi],
    legalComments: "none",
    logLevel: "warning",
  });
  renameSync(join(dist, temp), join(dist, "index.js"));
} finally {
  rmSync(join(dist, temp), { force: true });
}
const license = join(here, `.LICENSE.${process.pid}.tmp`);
copyFileSync(join(here, "../../LICENSE"), license);
renameSync(license, join(here, "LICENSE"));
