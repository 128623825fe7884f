/**
 * The test files of one `npm test` run, each bundled with the sources it imports into one plain
 * JavaScript module beside it (`test/x/.name.test.<run>.mjs`), so that node runs them without tsx.
 * Under tsx every module a test process loads, the npm packages' thousands included, passes through
 * its loader hooks, which in Node 20 run on another thread: that was half the suite's CPU time.
 *
 * A bundle sits in the test file's own folder, and every `import.meta.url`, `.dirname` and
 * `.filename` in it is the one of the TypeScript file it came from, so paths that a test or a
 * source module finds relative to itself (fixtures, package.json, the page's sources) resolve as
 * they do under tsx. npm packages stay external and load from node_modules as usual. Source maps
 * are inline, so a failure's stack names the .ts lines. Each run names its bundles with its own
 * tag (two runs at once do not collide) and removes them at the end; bundles of a run that was
 * killed are removed by the next run once they are a day old.
 */
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { type BuildOptions, build, type Plugin } from "esbuild";

const BUNDLE = /^\.[^/]+\.test\.\d+-\d+\.mjs$/;

/**
 * `import.meta.url`, `.dirname` and `.filename` of each loaded TypeScript file, as they would be
 * under tsx: `define` (below) turns each use in code, and only in code (a string that mentions
 * `import.meta.url` stays as written), into a name that each module declares for itself here.
 */
export const IMPORT_META = { "import.meta.url": "__ownImportMetaUrl", "import.meta.dirname": "__ownImportMetaDirname", "import.meta.filename": "__ownImportMetaFilename" };
export const ownImportMeta: Plugin = {
  name: "own-import-meta",
  setup(builder) {
    builder.onLoad({ filter: /\.ts$/ }, (args) => {
      const own = [
        `const __ownImportMetaUrl = ${JSON.stringify(pathToFileURL(args.path).href)};`,
        `const __ownImportMetaDirname = ${JSON.stringify(dirname(args.path))};`,
        `const __ownImportMetaFilename = ${JSON.stringify(args.path)};`,
      ].join(" ");
      // on the first line (after a #! line), so that the source map's line numbers stay the file's
      const text = readFileSync(args.path, "utf8");
      const at = text.startsWith("#!") ? text.indexOf("\n") + 1 : 0;
      return { contents: `${text.slice(0, at)}${own} ${text.slice(at)}`, loader: "ts" };
    });
  },
};

export interface TestBundles {
  /** the bundle each test file runs in (its own, or its group's), by the test file's path */
  bundleOf: Map<string, string>;
  remove: () => void;
}

const BUILD_OPTIONS: BuildOptions = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  sourcemap: "inline",
  define: IMPORT_META,
  plugins: [ownImportMeta],
  logLevel: "warning",
};

/**
 * Bundles `files`; those `groupOf` puts in a group (two or more) share one bundle and so one
 * process, which imports them in order: loading pi's packages and warming the JIT once per group
 * instead of once per file saved a third of those files' CPU time. Only files that leave no
 * state behind belong in a group (scripts/test.ts chooses them).
 */
export async function bundleTests(root: string, files: readonly string[], groupOf: (file: string) => string | undefined = () => undefined): Promise<TestBundles> {
  for (const dir of new Set(files.map((file) => dirname(file)))) removeStale(dir, (name) => BUNDLE.test(name));
  const tag = `${process.pid}-${Date.now()}`;
  const groups = new Map<string, string[]>();
  for (const file of files) {
    const group = groupOf(file);
    if (group !== undefined) groups.set(group, [...(groups.get(group) ?? []), file]);
  }
  for (const [group, members] of groups) if (members.length < 2) groups.delete(group);
  const grouped = new Set([...groups.values()].flat());
  const alone = files.filter((file) => !grouped.has(file));

  const bundleOf = new Map(alone.map((file) => [file, join(dirname(file), `.${basename(file, ".ts")}.${tag}.mjs`)]));
  const builds: Promise<unknown>[] = [build({ ...BUILD_OPTIONS, entryPoints: [...alone], outdir: root, outbase: root, entryNames: `[dir]/.[name].${tag}`, outExtension: { ".js": ".mjs" } })];
  for (const [group, members] of groups) {
    const dir = dirname(members[0]);
    const name = `${basename(group)}-files.test`;
    const bundle = join(dir, `.${name}.${tag}.mjs`);
    for (const file of members) bundleOf.set(file, bundle);
    // each file inside a suite of its own: its top-level hooks (beforeEach, after…) stay its own
    const contents = [
      'import { describe } from "node:test";',
      ...members.map((file) => `describe(${JSON.stringify(relative(root, file))}, () => import(${JSON.stringify(`./${basename(file)}`)}));`),
    ].join("\n");
    builds.push(build({ ...BUILD_OPTIONS, stdin: { contents, resolveDir: dir, sourcefile: `${name}.ts`, loader: "ts" }, outfile: bundle }));
  }
  await Promise.all(builds);
  const remove = () => {
    for (const bundle of new Set(bundleOf.values())) rmSync(bundle, { force: true });
  };
  return { bundleOf, remove };
}

/** What a run that was killed left in `dir` (the entries `left` names), once a day old: a live run's are newer. */
export function removeStale(dir: string, left: (name: string) => boolean): void {
  const dayAgo = Date.now() - 24 * 3600_000;
  for (const name of readdirSync(dir)) {
    if (!left(name)) continue;
    const path = join(dir, name);
    try {
      if (statSync(path).mtimeMs < dayAgo) rmSync(path, { recursive: true, force: true });
    } catch {
      // removed by another run meanwhile
    }
  }
}
