/**
 * Where the page gets its data: the model embedded in an exported file (every body inline,
 * searched here), or `bonsai view`'s server (bodies and search on request, changes pushed as
 * server-sent events).
 */
import type { Block } from "../blocks.js";
import { exportedBody } from "../left-out.js";
import type { ViewModel } from "../model.js";

export interface PageSource {
  readonly live: boolean;
  model(): Promise<ViewModel>;
  bodies(ids: readonly string[]): Promise<Record<string, Block[]>>;
  /** ids of entries whose text contains `query` (case-insensitive) */
  search(query: string): Promise<Set<string>>;
  onChange(listener: () => void): void;
}

function blockText(block: Block): string {
  switch (block.kind) {
    case "toolCall":
      return `${block.name}\n${block.args}`;
    case "output":
      return `${block.title}\n${block.text}`;
    case "pruned":
      return `${block.notice}\n${(block.original ?? []).map(blockText).join("\n")}`;
    case "image":
      return "";
    default:
      return block.text;
  }
}

export function embeddedSource(model: ViewModel): PageSource {
  let texts: Map<string, string> | undefined;
  return {
    live: false,
    model: async () => model,
    bodies: async (ids) => Object.fromEntries(ids.map((id) => [id, exportedBody(model, id)])),
    search: async (query) => {
      texts ??= new Map(model.nodes.map((n) => [n.id, `${n.kind}\n${n.label ?? ""}\n${n.preview}\n${(model.bodies?.[n.id] ?? []).map(blockText).join("\n")}`.toLowerCase()]));
      const q = query.toLowerCase();
      const found = new Set<string>();
      for (const [id, text] of texts) if (text.includes(q)) found.add(id);
      return found;
    },
    onChange: () => {},
  };
}

async function getJson<T>(path: string): Promise<T> {
  const response = await fetch(path, { headers: { accept: "application/json" } });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

export function serverSource(): PageSource {
  return {
    live: true,
    model: () => getJson<ViewModel>("/api/model"),
    bodies: async (ids) => (await getJson<{ bodies: Record<string, Block[]> }>(`/api/bodies?${ids.map((id) => `ids=${encodeURIComponent(id)}`).join("&")}`)).bodies,
    search: async (query) => new Set((await getJson<{ ids: string[] }>(`/api/search?q=${encodeURIComponent(query)}`)).ids),
    onChange: (listener) => {
      const events = new EventSource("/api/events");
      events.addEventListener("change", () => listener());
      // a reconnection (the server restarted, the connection dropped) may have missed changes
      let connections = 0;
      events.addEventListener("hello", () => {
        if (++connections > 1) listener();
      });
    },
  };
}
