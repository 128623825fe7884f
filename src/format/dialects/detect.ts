/**
 * Which agent wrote a session, from what its lines show. Each agent writes things the others do
 * not: oh-my-pi 18 a title slot before the header of every file it writes (and entry types of its
 * own: reset boundaries, title changes, model usage); pi from 0.87 context edits, usage entries,
 * system messages and system checkpoints. A file that shows neither is read by pi up to 0.86's
 * rule, which both later rules agree with on such a file except for the failed turns and
 * unanswered tool calls oh-my-pi 18 leaves out. Older oh-my-pi files (no slot; `model:
 * "provider/id"`, `fromExtension`, ttsr_injection and the like) keep that rule too, as before.
 */
import type { DialectName } from "./types.js";

const OMP_TYPES = new Set(["reset_boundary", "title_change", "model_usage", "service_tier_change", "credential_pin"]);
const PI1_TYPES = new Set(["context_edit", "usage"]);

/** What the lines read so far say about the agent that wrote them. */
export class DialectEvidence {
  private omp = false;
  private pi1 = false;

  /** oh-my-pi's title slot was read before the header. */
  titleSlot(): void {
    this.omp = true;
  }

  /**
   * What an entry shows: its type, a message's role, and for other entries its fields. Taken as
   * arguments, not an object, since loaders note tens of thousands of entries.
   */
  note(type: string, role: string | undefined, fields?: Record<string, unknown>): void {
    if (OMP_TYPES.has(type)) this.omp = true;
    else if (PI1_TYPES.has(type) || role === "system") this.pi1 = true;
    else if (fields) this.noteFields(type, fields);
  }

  private noteFields(type: string, f: Record<string, unknown>): void {
    if ((type === "compaction" || type === "branch_summary") && (f.systemMessage !== undefined || f.usage !== undefined)) this.pi1 = true;
  }

  get dialect(): DialectName {
    return detectDialect(this.omp, this.pi1);
  }
}

/** oh-my-pi's marks win: its files can hold entries in pi's spellings (a session pi started), never the reverse. */
export function detectDialect(omp: boolean, pi1: boolean): DialectName {
  return omp ? "omp" : pi1 ? "pi-1" : "pi";
}

/** The dialect of entries held in memory (no title slot to read). */
export function dialectOfEntries(entries: Iterable<{ type: string; message?: { role?: string } }>): DialectName {
  const evidence = new DialectEvidence();
  for (const entry of entries) {
    evidence.note(entry.type, entry.message?.role, entry as unknown as Record<string, unknown>);
  }
  return evidence.dialect;
}
