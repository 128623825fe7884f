/**
 * An entry's body as the page and the Markdown export show it: a list of blocks (text, thinking,
 * a tool call with its arguments, tool output, an image, a pruned result with its archived
 * original, a summary). One shape for both, so the HTML page, `bonsai view`'s body requests and
 * `export --md` render the same thing. Pure.
 */
import type { SessionEntry } from "../format/entry-types.js";
import type { ImageContent, TextContent } from "../format/message-types.js";

export type Block =
  /** Markdown text */
  | { kind: "text"; text: string; clipped?: number }
  | { kind: "thinking"; text: string; clipped?: number }
  | { kind: "toolCall"; id: string; name: string; args: string; clipped?: number }
  /** preformatted output of a tool, a shell command or a custom entry */
  | { kind: "output"; title: string; text: string; isError: boolean; clipped?: number }
  | { kind: "image"; mimeType: string; data: string; clipped?: number }
  /** a tool result whose content pruning replaced; `original` from the session's archive */
  | { kind: "pruned"; notice: string; prunedAt: number; original?: Block[] }
  | { kind: "summary"; title: string; text: string; clipped?: number }
  /** a line about an entry that carries no text of its own (model change, label, …) */
  | { kind: "meta"; text: string; clipped?: number };

export interface EntryBody {
  id: string;
  blocks: Block[];
}

/** The original content of pruned tool results, by entry id (ops/prune.ts PrunedRecord). */
export type ArchivedOriginals = ReadonlyMap<string, readonly (TextContent | ImageContent)[]>;

function contentBlocks(content: string | readonly (TextContent | ImageContent | { type: string })[], asOutput?: { title: string; isError: boolean }): Block[] {
  if (typeof content === "string") return [asOutput ? { kind: "output", ...asOutput, text: content } : { kind: "text", text: content }];
  const blocks: Block[] = [];
  for (const part of content) {
    if (part.type === "text") {
      const text = (part as TextContent).text;
      blocks.push(asOutput ? { kind: "output", ...asOutput, text } : { kind: "text", text });
    } else if (part.type === "image") {
      const image = part as ImageContent;
      blocks.push({ kind: "image", mimeType: image.mimeType, data: image.data });
    }
  }
  return blocks;
}

function stringify(value: unknown): string {
  try {
    return JSON.stringify(value ?? {}, null, 2) ?? "";
  } catch {
    return String(value);
  }
}

function messageBlocks(entry: SessionEntry & { type: "message" }, archived: ArchivedOriginals): Block[] {
  const message = entry.message;
  switch (message.role) {
    case "user":
      return contentBlocks(message.content);
    case "assistant": {
      const blocks: Block[] = [];
      for (const part of message.content) {
        if (part.type === "text") blocks.push({ kind: "text", text: part.text });
        else if (part.type === "thinking") blocks.push({ kind: "thinking", text: part.thinking });
        else if (part.type === "toolCall") blocks.push({ kind: "toolCall", id: part.id, name: part.name, args: stringify(part.arguments) });
      }
      if (message.errorMessage) blocks.push({ kind: "output", title: `error (${message.stopReason})`, text: message.errorMessage, isError: true });
      return blocks;
    }
    case "toolResult": {
      const title = message.toolName;
      if (message.prunedAt !== undefined) {
        const notice = message.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
        const original = archived.get(entry.id);
        return [
          {
            kind: "pruned",
            notice,
            prunedAt: message.prunedAt,
            ...(original ? { original: contentBlocks(original, { title, isError: message.isError }) } : {}),
          },
        ];
      }
      return contentBlocks(message.content, { title, isError: message.isError });
    }
    case "bashExecution": {
      const failed = message.exitCode !== undefined && message.exitCode !== null && message.exitCode !== 0;
      return [{ kind: "output", title: `$ ${message.command}`, text: message.output, isError: failed }];
    }
    case "pythonExecution":
      return [{ kind: "output", title: "python", text: `${message.code}\n---\n${message.output}`, isError: false }];
    case "custom":
    case "hookMessage":
      return contentBlocks(message.content);
    case "branchSummary":
      return [{ kind: "summary", title: "branch summary", text: message.summary }];
    case "compactionSummary":
      return [{ kind: "summary", title: "compaction summary", text: message.summary }];
    case "fileMention":
      return message.files.map((f) => ({ kind: "output", title: `@${f.path}`, text: f.content, isError: false }));
    default:
      return [];
  }
}

/** The blocks of an entry; `archived` supplies the originals of pruned tool results. */
export function entryBlocks(entry: SessionEntry, archived: ArchivedOriginals = new Map()): Block[] {
  switch (entry.type) {
    case "message":
      return messageBlocks(entry, archived);
    case "compaction": {
      const blocks: Block[] = [];
      if (entry.shortSummary) blocks.push({ kind: "meta", text: entry.shortSummary });
      blocks.push({ kind: "summary", title: "compaction summary", text: entry.summary });
      return blocks;
    }
    case "branch_summary":
      return [{ kind: "summary", title: "branch summary", text: entry.summary }];
    case "custom_message":
      return contentBlocks(entry.content);
    case "custom":
      return [{ kind: "output", title: entry.customType, text: stringify(entry.data), isError: false }];
    case "model_change":
      return [{ kind: "meta", text: `model: ${entry.provider && entry.modelId ? `${entry.provider}/${entry.modelId}` : (entry.model ?? "?")}` }];
    case "thinking_level_change":
      return [{ kind: "meta", text: `thinking level: ${entry.thinkingLevel}` }];
    case "label":
      return [{ kind: "meta", text: entry.label ? `label "${entry.label}" on ${entry.targetId}` : `label cleared on ${entry.targetId}` }];
    case "session_info":
      return [{ kind: "meta", text: `session name: ${entry.name ?? ""}` }];
    case "session_init":
      return [{ kind: "output", title: "system prompt", text: entry.systemPrompt, isError: false }, { kind: "text", text: entry.task }];
    case "ttsr_injection":
      return [{ kind: "meta", text: `rules injected: ${entry.injectedRules.join(", ")}` }];
    case "mode_change":
      return [{ kind: "meta", text: `mode: ${entry.mode}` }];
    default:
      return [];
  }
}

/** All searchable text of blocks, lower-cased by the caller as needed. */
export function blocksText(blocks: readonly Block[]): string {
  const parts: string[] = [];
  for (const block of blocks) {
    if (block.kind === "toolCall") parts.push(block.name, block.args);
    else if (block.kind === "output") parts.push(block.title, block.text);
    else if (block.kind === "pruned") parts.push(block.notice, blocksText(block.original ?? []));
    else if (block.kind === "summary") parts.push(block.text);
    else if (block.kind !== "image") parts.push(block.text);
  }
  return parts.join("\n");
}
