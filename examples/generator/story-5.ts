/** Part 5 of the example session: operations work, a health check with graceful shutdown, then Docker and CI. */
import { bash, edit, read, type SessionRecorder, write } from "./recorder.js";
import { ok, TESTS_AFTER_RELEASE } from "./story-4.js";
import { testRun } from "./workspace.js";

const ALL_TESTS = [
  ...TESTS_AFTER_RELEASE,
  "pages in creation order even when tasks arrive out of order",
  "continues after a cursor whose task was deleted",
  "filters by done and pages past tasks that don't match",
  "keeps the order index in step with deletes",
  "trims titles and enforces 1-200 characters",
  "rejects wrong types in a patch, naming the field",
  "rejects a patch that changes nothing",
  "accepts a valid partial patch",
];

export function healthAndShutdown(r: SessionRecorder): void {
  r.user(
    "Ops asks for two things before this goes to production: `GET /healthz` (never rate-limited) and a graceful shutdown " +
      "on SIGTERM: stop accepting connections, let in-flight requests finish, exit within 10 s.",
  );
  r.act({ calls: [read("src/server.ts")] });
  r.act({
    thinking:
      "healthz must come before the limiter, or a busy load balancer health check could get 429 and pull the instance. " +
      "Shutdown: server.close() stops accepting and calls back when all connections end; keep-alive connections would " +
      "hold it open, so closeIdleConnections() (Node 18.2+). A timer forces exit after the grace period; unref it so it " +
      "doesn't itself keep the process alive.",
    text: "The health check has to come before the rate limiter, or a busy load balancer could get a 429 and take the instance out of rotation.",
    calls: [
      edit(
        "src/server.ts",
        [
          "    try {\n      if (!limiter(req, res)) return;\n",
          `    try {
      // health checks come from the load balancer: never rate-limited
      if (url.pathname === "/healthz" && req.method === "GET") {
        sendJson(res, 200, { status: "ok", uptimeSeconds: Math.round(process.uptime()) });
        return;
      }
      if (!limiter(req, res)) return;
`,
        ],
        [
          `  createApp().listen(port, () => console.log(\`tasktrack listening on :\${port}\`));\n}\n`,
          `  const server = createApp().listen(port, () => console.log(\`tasktrack listening on :\${port}\`));
  process.once("SIGTERM", () => shutdown(server, 10_000));
}

/** Stops accepting connections, lets in-flight requests finish, then exits; forces the exit after \`graceMs\`. */
export function shutdown(server: Server, graceMs: number): void {
  console.log("SIGTERM: draining connections");
  server.close((error) => process.exit(error ? 1 : 0));
  server.closeIdleConnections();
  setTimeout(() => {
    console.error(\`still busy after \${graceMs} ms; exiting\`);
    process.exit(1);
  }, graceMs).unref();
}
`,
        ],
      ),
    ],
  });
  r.act({
    text: "A manual check of both, with a slow request in flight during the shutdown:",
    calls: [
      bash(
        "PORT=3311 npm start > /tmp/tt.log 2>&1 & sleep 1.5; curl -s localhost:3311/healthz; echo; " +
          "(curl -s -o /dev/null -w 'in-flight request: %{http_code}\\n' localhost:3311/tasks &); kill -TERM $!; sleep 1; cat /tmp/tt.log; " +
          "curl -s localhost:3311/healthz || echo 'server is gone'",
        '{"status":"ok","uptimeSeconds":2}\nin-flight request: 200\n\n> tasktrack@0.4.0 start\n> node --import tsx src/server.ts\n\ntasktrack listening on :3311\nSIGTERM: draining connections\nserver is gone',
        0,
        3.2,
      ),
    ],
  });
  r.act({ calls: [read("test/tasks.test.ts", 95)] });
  r.act({
    calls: [
      edit("test/tasks.test.ts", [
        '  it("deletes a task", async () => {\n',
        `  it("answers health checks even when rate-limited", async () => {
    const res = await fetch(\`\${base}/healthz\`);
    assert.equal(res.status, 200);
    assert.equal((await res.json()).status, "ok");
  });

  it("deletes a task", async () => {
`,
      ]),
    ],
  });
  const run = testRun("tasks API", ok([...ALL_TESTS, "answers health checks even when rate-limited"]), 1012.6, "0.4.0");
  r.act({ calls: [bash("npm test", run.output, run.exitCode, 3.9)] });
  r.reply(
    "Both are in `src/server.ts`:\n\n- `GET /healthz` → `{ status: \"ok\", uptimeSeconds }`, answered before the rate limiter.\n- On SIGTERM the server stops accepting connections, closes idle keep-alive connections, lets in-flight requests finish and exits 0; after 10 s it exits 1 regardless. The manual run shows an in-flight request completing with 200 during the drain.\n\nThere's a test for `/healthz`. The SIGTERM path is only tested by hand, because it exits the process.",
  );
}

const DOCKERFILE = `# Small production image: Alpine, production dependencies only, runs as the unprivileged node user.
FROM node:20-alpine
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY tsconfig.json ./
COPY src ./src
USER node
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=3s CMD wget -qO- http://127.0.0.1:3000/healthz || exit 1
CMD ["node", "--import", "tsx", "src/server.ts"]
`;

const CI = `name: ci
on:
  push:
    branches: [main]
  pull_request:

jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        node: [20, 22]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-node@v4
        with:
          node-version: \${{ matrix.node }}
          cache: npm
      - run: npm ci
      - run: npm run typecheck
      - run: npm run lint
      - run: npm test
`;

const DOCKER_BUILD = `#0 building with "default" instance using docker driver

#1 [internal] load build definition from Dockerfile
#1 transferring dockerfile: 512B done
#1 DONE 0.0s

#2 [internal] load metadata for docker.io/library/node:20-alpine
#2 DONE 1.1s

#3 [internal] load .dockerignore
#3 transferring context: 92B done
#3 DONE 0.0s

#4 [1/6] FROM docker.io/library/node:20-alpine@sha256:2d07db07a2df6830718ae2a47db6fedce6745f5bcd174c398f2acdda90a11c03
#4 resolve docker.io/library/node:20-alpine@sha256:2d07db07a2df6830718ae2a47db6fedce6745f5bcd174c398f2acdda90a11c03 done
#4 CACHED

#5 [internal] load build context
#5 transferring context: 49.71kB done
#5 DONE 0.0s

#6 [2/6] WORKDIR /app
#6 DONE 0.1s

#7 [3/6] COPY package.json package-lock.json ./
#7 DONE 0.0s

#8 [4/6] RUN npm ci --omit=dev && npm cache clean --force
#8 1.482 
#8 1.482 up to date, audited 1 package in 312ms
#8 1.483 
#8 1.483 found 0 vulnerabilities
#8 1.791 npm warn using --force Recommended protections disabled.
#8 DONE 1.9s

#9 [5/6] COPY tsconfig.json ./
#9 DONE 0.0s

#10 [6/6] COPY src ./src
#10 DONE 0.0s

#11 exporting to image
#11 exporting layers 0.1s done
#11 writing image sha256:5b1f0c0d3e2a8d4f7e96b1c2a3f4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2 done
#11 naming to docker.io/library/tasktrack:dev done
#11 DONE 0.1s`;

export function dockerAndCi(r: SessionRecorder): void {
  r.user("Last thing for today: a Dockerfile (small image, non-root) and a GitHub Actions workflow running typecheck, lint and tests on Node 20 and 22.");
  r.act({ calls: [bash("cat .gitignore; node --version; docker --version", "node_modules\ndist\n*.log\nv20.19.4\nDocker version 27.3.1, build ce12230", 0, 0.4)] });
  r.act({
    thinking:
      "node:20-alpine, npm ci --omit=dev, copy src, USER node. The server runs through tsx... which is a devDependency. " +
      "Build and run it to see rather than guess.",
    calls: [write("Dockerfile", DOCKERFILE), write(".dockerignore", "node_modules\n.git\nbench\ntest\n*.log\n")],
  });
  r.act({ calls: [bash("docker build -t tasktrack:dev .", DOCKER_BUILD, 0, 9)] });
  r.act({
    calls: [
      bash(
        "docker run --rm -p 3312:3000 tasktrack:dev",
        "node:internal/modules/run_main:123\n    triggerUncaughtException(\n    ^\n\nError [ERR_MODULE_NOT_FOUND]: Cannot find package 'tsx' imported from /app/\n    at packageResolve (node:internal/modules/esm/resolve:873:9)\n    at moduleResolve (node:internal/modules/esm/resolve:946:18)\n    at defaultResolve (node:internal/modules/esm/resolve:1188:11)\n    at nextResolve (node:internal/modules/esm/hooks:864:28)\n    at Hooks.register (node:internal/modules/esm/hooks:195:13) {\n  code: 'ERR_MODULE_NOT_FOUND'\n}\n\nNode.js v20.19.4",
        1,
        2.5,
      ),
    ],
  });
  r.act({
    thinking:
      "As suspected: --omit=dev drops tsx. Options: compile with tsc to dist/ in a build stage (cleaner, no runtime " +
      "transpiler) or move tsx to dependencies (simplest). The project has noEmit in tsconfig and imports use .js " +
      "suffixes, so compiling would work, but it changes the start script and tsconfig. For today: tsx as a runtime " +
      "dependency, and mention the compile option.",
    text: "`--omit=dev` leaves out `tsx`, which the server runs through. The smallest fix is to make `tsx` a runtime dependency:",
    calls: [
      edit(
        "package.json",
        ['  "devDependencies": {\n', '  "dependencies": {\n    "tsx": "4.23.15"\n  },\n  "devDependencies": {\n'],
        ['    "tsx": "4.23.15",\n    "typescript": "5.9.3"\n', '    "typescript": "5.9.3"\n'],
      ),
    ],
  });
  r.act({
    calls: [
      bash(
        "npm install --silent && docker build -q -t tasktrack:dev . && docker run -d --rm -p 3312:3000 --name tt tasktrack:dev && sleep 2 && curl -s localhost:3312/healthz && echo && docker stop tt && docker images tasktrack:dev --format '{{.Size}}'",
        "sha256:8e0c77a4f1d3b5e2c9a6f7d8e1b2c3a4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0\n3f9c2d8a41b7e06c5d2f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7\n{\"status\":\"ok\",\"uptimeSeconds\":2}\ntt\n156MB",
        0,
        14,
      ),
    ],
  });
  r.act({ calls: [write(".github/workflows/ci.yml", CI)] });
  r.act({
    calls: [
      bash(
        "npx --yes yaml-lint .github/workflows/ci.yml && git status --short",
        "✔ YAML Lint successful.\n M package-lock.json\n M package.json\n?? .dockerignore\n?? .github/\n?? Dockerfile",
        0,
        4.2,
      ),
    ],
  });
  const run = testRun("tasks API", ok([...ALL_TESTS, "answers health checks even when rate-limited"], 2), 1008.9, "0.4.0");
  r.act({ calls: [bash("npm test", run.output, run.exitCode, 3.9)] });
  r.reply(
    "Done:\n\n- **Dockerfile**: `node:20-alpine`, production dependencies only, runs as the `node` user, `HEALTHCHECK` on `/healthz`. The image is 156 MB and serves `/healthz` (checked above). `.dockerignore` keeps tests, benches and `.git` out.\n- **`.github/workflows/ci.yml`**: typecheck, lint and tests on Node 20 and 22 for pushes to `main` and for pull requests, with the npm cache.\n- `tsx` moved to `dependencies`, since the container runs the TypeScript directly.\n\nWorth a follow-up: compiling to `dist/` in a build stage would drop `tsx` from production and make the image a bit smaller.",
  );
}
