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
  /** puts still to be taken on trust (trustNext), and where the run of them began (-1: none yet) */
  private trusted = 0;
  private trustedFrom = -1;

  /**
   * `items[position]` is the item a stored position stands for. `newestHolds`: the caller appends
   * an item exactly when the put of its id at the end returned true, so the newest item holds its
   * id (a later put of it replaced the holder or was refused) and is found without a lookup.
   */
  constructor(
    private readonly items: readonly T[],
    private readonly newestHolds = false,
  ) {}

  get size(): number {
    this.settle();
    return this.count;
  }

  get(id: string): T | undefined {
    // a session's leaf, found without placing the ids taken on trust
    const newest = this.newestHolds ? this.items[this.items.length - 1] : undefined;
    if (newest !== undefined && newest.id === id) {
      this.trusted = 0; // as after any lookup: later puts are checked
      return newest;
    }
    this.settle();
    const slot = this.find(id, hashOf(id));
    return slot < 0 ? undefined : this.items[this.slots[slot + 1]];
  }

  has(id: string): boolean {
    return this.get(id) !== undefined;
  }

  /** Room for `count` more ids; with `distinct`, trustNext(count). */
  expect(count: number, distinct: boolean): void {
    if (distinct) this.trustNext(count);
    else this.reserve(count);
  }

  /**
   * The next `count` puts, each appending its item, are of distinct ids none held yet (a replay of
   * what an earlier read indexed says so): they are stored on the first lookup instead, so a
   * session opened to build one context does not hash and place every id of its file.
   */
  trustNext(count: number): void {
    this.settle();
    this.trusted = count;
  }

  /** Stores the items whose puts were taken on trust; the trust ends. */
  private settle(): void {
    if (this.trustedFrom < 0) {
      this.trusted = 0;
      return;
    }
    const from = this.trustedFrom;
    this.trustedFrom = -1;
    this.trusted = 0;
    this.reserve(this.items.length - from);
    for (let i = from; i < this.items.length; i++) this.put(this.items[i].id, i, false);
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
    if (this.trusted > 0 && position === this.items.length) {
      if (this.trustedFrom < 0) this.trustedFrom = position;
      this.trusted--;
      return true;
    }
    if (this.trustedFrom >= 0) this.settle();
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
