/**
 * Entry id -> item, sized for sessions of millions of entries. A JS Map spends most of a large
 * session's load time growing and missing the cache (about 0.8 µs per insert at a million ids);
 * this table is open addressing over one Int32Array of (hash, position) pairs, so adding a new
 * id touches one slot. Positions index an array the caller owns and fills in the same order;
 * ids that share a hash are told apart by comparing the item's id.
 */
export class IdTable<T extends { readonly id: string }> {
  private slots = new Int32Array(2 * 64);
  private mask = 63;
  private count = 0;

  /** `items[position]` is the item a stored position stands for. */
  constructor(private readonly items: readonly T[]) {}

  get size(): number {
    return this.count;
  }

  get(id: string): T | undefined {
    const slot = this.find(id, hashOf(id));
    return slot < 0 ? undefined : this.items[this.slots[slot + 1]];
  }

  has(id: string): boolean {
    return this.find(id, hashOf(id)) >= 0;
  }

  /** Makes room for `count` more ids without growing on the way. */
  reserve(count: number): void {
    let capacity = this.mask + 1;
    while ((this.count + count) * 2 > capacity) capacity *= 2;
    if (capacity > this.mask + 1) this.grow(capacity);
  }

  /**
   * Maps `id` to `position`. When the id is there already, `replace` decides whether it now
   * stands for `position`; the result says whether the table changed.
   */
  put(id: string, position: number, replace: boolean): boolean {
    const hash = hashOf(id);
    const found = this.find(id, hash);
    if (found >= 0) {
      if (replace) this.slots[found + 1] = position;
      return replace;
    }
    if ((this.count + 1) * 2 > this.mask + 1) this.grow();
    let i = hash & this.mask;
    while (this.slots[2 * i] !== 0) i = (i + 1) & this.mask;
    this.slots[2 * i] = hash;
    this.slots[2 * i + 1] = position;
    this.count++;
    return true;
  }

  /** The slot (index of its hash) holding `id`, or -1. */
  private find(id: string, hash: number): number {
    const slots = this.slots;
    for (let i = hash & this.mask; ; i = (i + 1) & this.mask) {
      const h = slots[2 * i];
      if (h === 0) return -1;
      if (h === hash && this.items[slots[2 * i + 1]].id === id) return 2 * i;
    }
  }

  private grow(capacity = 2 * (this.mask + 1)): void {
    const old = this.slots;
    this.slots = new Int32Array(2 * capacity);
    this.mask = capacity - 1;
    for (let j = 0; j < old.length; j += 2) {
      const hash = old[j];
      if (hash === 0) continue;
      let i = hash & this.mask;
      while (this.slots[2 * i] !== 0) i = (i + 1) & this.mask;
      this.slots[2 * i] = hash;
      this.slots[2 * i + 1] = old[j + 1];
    }
  }
}

/** FNV-1a over the UTF-16 code units, never 0 (0 marks an empty slot). */
function hashOf(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h | 1;
}
