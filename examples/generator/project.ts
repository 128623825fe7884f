/** The project the example session works on: "tasktrack", a small task-list HTTP API. */

export const PROJECT_ROOT = "/home/dev/projects/tasktrack";

export const INITIAL_FILES: Record<string, string> = {
  "package.json": `{
  "name": "tasktrack",
  "version": "0.3.2",
  "private": true,
  "type": "module",
  "scripts": {
    "start": "node --import tsx src/server.ts",
    "test": "node --import tsx --test test/*.test.ts",
    "lint": "biome lint src test",
    "typecheck": "tsc --noEmit"
  },
  "devDependencies": {
    "@biomejs/biome": "2.6.8",
    "@types/node": "20.19.43",
    "tsx": "4.23.15",
    "typescript": "5.9.3"
  }
}
`,
  "tsconfig.json": `{
  "compilerOptions": {
    "target": "ES2022",
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "strict": true,
    "noEmit": true,
    "types": ["node"]
  },
  "include": ["src", "test"]
}
`,
  "README.md": `# tasktrack

A tiny task-list API used by the team dashboard.

    npm start        # listens on PORT (default 3000)
    npm test

## Endpoints

- \`GET /tasks\` — all tasks
- \`POST /tasks\` — \`{ "title": "..." }\`
- \`GET /tasks/:id\`, \`PATCH /tasks/:id\`, \`DELETE /tasks/:id\`
`,
  "src/types.ts": `export interface Task {
  id: string;
  title: string;
  done: boolean;
  createdAt: string;
  updatedAt: string;
}
`,
  "src/store.ts": `import { randomUUID } from "node:crypto";
import type { Task } from "./types.js";

export class TaskStore {
  private tasks = new Map<string, Task>();

  create(title: string, now = new Date()): Task {
    const stamp = now.toISOString();
    const task: Task = { id: randomUUID(), title, done: false, createdAt: stamp, updatedAt: stamp };
    this.tasks.set(task.id, task);
    return task;
  }

  get(id: string): Task | undefined {
    return this.tasks.get(id);
  }

  list(): Task[] {
    return [...this.tasks.values()];
  }

  update(id: string, patch: Partial<Pick<Task, "title" | "done">>, now = new Date()): Task | undefined {
    const task = this.tasks.get(id);
    if (!task) return undefined;
    Object.assign(task, patch, { updatedAt: now.toISOString() });
    return task;
  }

  remove(id: string): boolean {
    return this.tasks.delete(id);
  }
}
`,
  "src/http.ts": `import type { IncomingMessage, ServerResponse } from "node:http";

export async function readJson(req: IncomingMessage): Promise<any> {
  let body = "";
  for await (const chunk of req) body += chunk;
  if (!body) return undefined;
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}
`,
  "src/routes/tasks.ts": `import type { IncomingMessage, ServerResponse } from "node:http";
import { readJson, sendJson } from "../http.js";
import type { TaskStore } from "../store.js";

export type Route = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean>;

export function taskRoutes(store: TaskStore): Route {
  return async (req, res, url) => {
    if (url.pathname === "/tasks" && req.method === "GET") {
      sendJson(res, 200, store.list());
      return true;
    }
    if (url.pathname === "/tasks" && req.method === "POST") {
      const body = await readJson(req);
      if (typeof body?.title !== "string" || body.title.trim() === "") {
        sendJson(res, 400, { error: "title is required" });
        return true;
      }
      sendJson(res, 201, store.create(body.title.trim()));
      return true;
    }
    const match = /^\\/tasks\\/([\\w-]+)$/.exec(url.pathname);
    if (!match) return false;
    const id = match[1];
    if (req.method === "GET") {
      const task = store.get(id);
      if (task) sendJson(res, 200, task);
      else sendJson(res, 404, { error: "task not found" });
      return true;
    }
    if (req.method === "PATCH") {
      const body = await readJson(req);
      const task = store.update(id, { title: body?.title, done: body?.done });
      if (task) sendJson(res, 200, task);
      else sendJson(res, 404, { error: "task not found" });
      return true;
    }
    if (req.method === "DELETE") {
      if (store.remove(id)) {
        res.writeHead(204).end();
      } else {
        sendJson(res, 404, { error: "task not found" });
      }
      return true;
    }
    return false;
  };
}
`,
  "src/server.ts": `import { createServer, type Server } from "node:http";
import { sendJson } from "./http.js";
import { taskRoutes } from "./routes/tasks.js";
import { TaskStore } from "./store.js";

export function createApp(store = new TaskStore()): Server {
  const routes = [taskRoutes(store)];
  return createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    try {
      for (const route of routes) {
        if (await route(req, res, url)) return;
      }
      sendJson(res, 404, { error: "not found" });
    } catch (error) {
      console.error(error);
      sendJson(res, 500, { error: "internal error" });
    }
  });
}

if (import.meta.url === \`file://\${process.argv[1]}\`) {
  const port = Number(process.env.PORT ?? 3000);
  createApp().listen(port, () => console.log(\`tasktrack listening on :\${port}\`));
}
`,
  "test/tasks.test.ts": `import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { createApp } from "../src/server.js";

describe("tasks API", () => {
  const server = createApp();
  let base = "";

  before(async () => {
    await new Promise<void>((resolve) => server.listen(3100, resolve));
    base = \`http://127.0.0.1:\${(server.address() as AddressInfo).port}\`;
  });
  after(() => server.close());

  it("creates a task", async () => {
    const res = await fetch(\`\${base}/tasks\`, { method: "POST", body: JSON.stringify({ title: "write docs" }) });
    assert.equal(res.status, 201);
    const task = await res.json();
    assert.equal(task.title, "write docs");
    assert.equal(task.done, false);
  });

  it("rejects a task without a title", async () => {
    const res = await fetch(\`\${base}/tasks\`, { method: "POST", body: "{}" });
    assert.equal(res.status, 400);
  });

  it("lists tasks", async () => {
    const res = await fetch(\`\${base}/tasks\`);
    assert.equal(res.status, 200);
    assert.ok(Array.isArray(await res.json()));
  });

  it("updates a task", async () => {
    const created = await (await fetch(\`\${base}/tasks\`, { method: "POST", body: JSON.stringify({ title: "a" }) })).json();
    const res = await fetch(\`\${base}/tasks/\${created.id}\`, { method: "PATCH", body: JSON.stringify({ done: true }) });
    assert.equal((await res.json()).done, true);
  });

  it("deletes a task", async () => {
    const created = await (await fetch(\`\${base}/tasks\`, { method: "POST", body: JSON.stringify({ title: "b" }) })).json();
    const res = await fetch(\`\${base}/tasks/\${created.id}\`, { method: "DELETE" });
    assert.equal(res.status, 204);
  });
});
`,
};
