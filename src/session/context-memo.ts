/**
 * The context of a rooted leaf of the index, built from the path summaries its node carries (see
 * index-node.ts) and the last context built. The thinking level and the model come from the
 * nearest entry that set them; the messages from the part of the path the context rule reads
 * (contextSegments: from the latest compaction's first kept entry on), and of that only what is
 * below the leaf of the last context built when the new leaf descends from it: an agent asks for
 * the context every turn after appending an entry or two, and only those are converted.
 */
import { modelFromChange } from "../format/context.js";
import type { Dialect } from "../format/dialects/index.js";
import type { AgentMessage } from "../format/message-types.js";
import type { CompactionEntry, ModelRef, SessionContext, ThinkingLevelChangeEntry } from "../format/entry-types.js";
import type { IndexNode } from "./index-node.js";
import type { LazyBodies } from "./lazy-bodies.js";

/**
 * The messages of the last context built, for a rooted leaf. Still exact for any leaf below it
 * with no compaction in between, because a rooted node's path never changes; only a body changed
 * in memory makes it stale (the index then calls forget()).
 */
interface RememberedContext {
  leaf: IndexNode;
  /** never handed out: callers get copies, and this one grows as the leaf moves down */
  messages: AgentMessage[];
  /** the rule it was built by: another one (the session's dialect showed itself) starts over */
  dialect: Dialect;
}

export class ContextMemo {
  /** one context, the last built: one per leaf would keep every path's array alive */
  private remembered: RememberedContext | undefined;
  private converted = 0;

  constructor(private readonly bodies: LazyBodies) {}

  /** How many entries have been turned into messages so far. */
  get conversions(): number {
    return this.converted;
  }

  /** Drops the remembered context: a body on its path changed, or its session is closed. */
  forget(): void {
    this.remembered = undefined;
  }

  /**
   * The context at a rooted leaf, in a new object with a new messages array; undefined when the
   * leaf's model source changed role since it was indexed (replaced in memory), and only a walk
   * over the whole path can say. For a dialect whose settings are the latest set on the path.
   */
  context(leaf: IndexNode, dialect: Dialect): SessionContext | undefined {
    const thinking = leaf.thinking && (this.bodies.entryOf(leaf.thinking) as ThinkingLevelChangeEntry);
    const model = this.model(leaf);
    if (model === undefined) return undefined;
    const thinkingLevel = thinking ? (thinking.thinkingLevel ?? "off") : "off";
    const messages = this.messagesOf(leaf, dialect);
    this.remembered = { leaf, messages, dialect };
    return { messages: messages.slice(), thinkingLevel, model };
  }

  /**
   * The model at a rooted leaf, from its model source alone (one body read at most); undefined
   * when that source changed role since it was indexed, and only a walk over the path can say.
   */
  model(leaf: IndexNode): ModelRef | null | undefined {
    const source = leaf.model && this.bodies.entryOf(leaf.model);
    if (!source) return null;
    if (source.type === "model_change") return modelFromChange(source) ?? null;
    if (source.type === "message" && source.message.role === "assistant") return { provider: source.message.provider, modelId: source.message.model };
    return undefined;
  }

  /** The messages at a rooted leaf: the remembered ones extended when the leaf is below them and the dialect allows. */
  private messagesOf(leaf: IndexNode, dialect: Dialect): AgentMessage[] {
    const stop = leaf.compaction;
    const last = this.remembered?.dialect === dialect ? this.remembered.leaf : undefined;
    // Leaf first; reversed into a root-first path below. Walking up, the remembered leaf is met
    // before the nearest compaction (or is it) only when both share that compaction, so its
    // messages are a prefix of this leaf's and the entries below it are all after the compaction.
    const path: IndexNode[] = [];
    let n: IndexNode | undefined = leaf;
    for (; n && n !== last; n = n.parent) {
      path.push(n);
      if (n === stop) break;
    }
    if (n !== undefined && n === last) {
      if (path.every((node) => dialect.appendsOnly(node))) {
        path.reverse();
        const messages = this.remembered!.messages;
        for (const p of dialect.project(this.bodies.load(path), WHOLE_PATH)) messages.push(p.message);
        this.converted += path.length;
        return messages;
      }
      // a new entry changes messages already there (a context edit): rebuilt from where the rule reads
      for (; n; n = n.parent) {
        path.push(n);
        if (n === stop) break;
      }
    }
    if (stop) {
      // on up to the entry the compaction keeps first: the rule reads nothing before it. When
      // no entry above has that id, it keeps none and the path starts at the compaction.
      const firstKeptId = (this.bodies.entryOf(stop) as CompactionEntry).firstKeptEntryId;
      const withoutKept = path.length;
      let found = false;
      for (let k = stop.parent; k && !found; k = k.parent) {
        path.push(k);
        found = k.id === firstKeptId;
      }
      if (!found) path.length = withoutKept;
    }
    path.reverse();
    const entries = this.bodies.load(path);
    const segments = dialect.segments(entries);
    this.converted += path.length - (segments.compaction >= 0 ? 1 : 0); // the compaction gives its summary, converted by none
    return dialect.project(entries, segments).map((p) => p.message);
  }
}

/** Segments that read every entry of a path as it comes: new entries below a remembered context. */
const WHOLE_PATH = { compaction: -1, kept: -1, start: 0 } as const;
