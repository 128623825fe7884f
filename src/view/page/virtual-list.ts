/**
 * A list that renders only the rows on screen (and a margin), so a session of 100,000 entries
 * costs what its visible rows cost. Row heights start as estimates and are measured once rendered
 * (and again when a row resizes: a body arriving, a <details> opened); the row at the top of the
 * screen stays in place when rows above it change height.
 */
export interface VirtualListOptions {
  /** a stable key of row i (heights are remembered by key across refreshes) */
  key(index: number): string;
  estimate(index: number): number;
  render(index: number): HTMLElement;
  /** rendered rows above and below the screen, in pixels */
  overscan?: number;
}

export class VirtualList {
  private count = 0;
  /** row heights (measured or estimated) and the offsets they add up to; offsets[i] is row i's top */
  private sizes = new Float64Array(0);
  private offsets = new Float64Array(1);
  private readonly heights = new Map<string, number>();
  private readonly mounted = new Map<string, { index: number; el: HTMLElement }>();
  private readonly spacer: HTMLDivElement;
  private readonly resize: ResizeObserver;
  private frame = 0;

  constructor(
    readonly scroller: HTMLElement,
    private readonly options: VirtualListOptions,
  ) {
    this.spacer = document.createElement("div");
    this.spacer.className = "vl-spacer";
    scroller.append(this.spacer);
    scroller.addEventListener("scroll", () => this.schedule());
    this.resize = new ResizeObserver((records) => {
      let from = -1;
      for (const record of records) {
        const el = record.target as HTMLElement;
        const row = el.dataset.vlKey === undefined ? undefined : this.mounted.get(el.dataset.vlKey);
        if (!row) continue;
        if (this.measure(row.index, el) && (from < 0 || row.index < from)) from = row.index;
      }
      if (from >= 0) this.relayout(from);
    });
  }

  get size(): number {
    return this.count;
  }

  /** Sets the number of rows and renders again (every mounted row is rebuilt). */
  setCount(count: number): void {
    this.count = count;
    for (const { el } of this.mounted.values()) this.unmount(el);
    this.mounted.clear();
    this.sizes = new Float64Array(count);
    for (let i = 0; i < count; i++) this.sizes[i] = this.heights.get(this.options.key(i)) ?? this.options.estimate(i);
    this.offsets = new Float64Array(count + 1);
    this.computeOffsets(0);
    this.renderWindow();
  }

  /** Rebuilds the mounted rows (their content changed), keeping the scroll position. */
  refresh(): void {
    for (const { el } of this.mounted.values()) this.unmount(el);
    this.mounted.clear();
    this.renderWindow();
  }

  /** Rebuilds the rows among `indices` that are mounted. */
  refreshRows(indices: readonly number[]): void {
    let any = false;
    for (const index of indices) {
      const key = this.options.key(index);
      const row = this.mounted.get(key);
      if (!row) continue;
      this.unmount(row.el);
      this.mounted.delete(key);
      any = true;
    }
    if (any) this.renderWindow();
  }

  /** Scrolls so that row `index` is at the top (or only into view, `nearest`). */
  scrollToIndex(index: number, align: "start" | "nearest" = "start"): void {
    if (index < 0 || index >= this.count) return;
    const top = this.offsets[index];
    const bottom = this.offsets[index + 1];
    const view = this.scroller.clientHeight;
    if (align === "nearest") {
      if (top < this.scroller.scrollTop) this.scroller.scrollTop = top;
      else if (bottom > this.scroller.scrollTop + view) this.scroller.scrollTop = bottom - view;
    } else {
      this.scroller.scrollTop = top;
    }
    this.renderWindow();
    // measured rows above may have moved it: put it back once more
    if (align === "start" && this.offsets[index] !== this.scroller.scrollTop) {
      this.scroller.scrollTop = this.offsets[index];
      this.renderWindow();
    }
  }

  /** The element of row `index`, when it is rendered. */
  element(index: number): HTMLElement | undefined {
    return this.mounted.get(this.options.key(index))?.el;
  }

  /** Records row `index`'s rendered height; true when it changed. */
  private measure(index: number, el: HTMLElement): boolean {
    const height = el.offsetHeight;
    if (height <= 0 || height === this.sizes[index]) return false;
    this.sizes[index] = height;
    this.heights.set(this.options.key(index), height);
    return true;
  }

  private computeOffsets(from: number): void {
    const { offsets, sizes } = this;
    for (let i = from; i < this.count; i++) offsets[i + 1] = offsets[i] + sizes[i];
    this.spacer.style.height = `${offsets[this.count]}px`;
  }

  /** First row whose bottom is below `y`. */
  private indexAt(y: number): number {
    let low = 0;
    let high = this.count - 1;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.offsets[mid + 1] <= y) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  private schedule(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.renderWindow();
    });
  }

  private unmount(el: HTMLElement): void {
    this.resize.unobserve(el);
    el.remove();
  }

  /** Heights from row `from` on changed: move rows, keeping the row at the top of the screen where it is. */
  private relayout(from: number): void {
    const top = this.scroller.scrollTop;
    const anchor = this.count > 0 ? this.indexAt(top) : 0;
    const within = top - (this.offsets[anchor] ?? 0);
    this.computeOffsets(from);
    if (this.count > 0 && top > 0) this.scroller.scrollTop = this.offsets[anchor] + within;
    for (const { index, el } of this.mounted.values()) el.style.transform = `translateY(${this.offsets[index]}px)`;
    this.renderWindow();
  }

  private renderWindow(): void {
    if (this.count === 0) {
      for (const { el } of this.mounted.values()) this.unmount(el);
      this.mounted.clear();
      return;
    }
    const overscan = this.options.overscan ?? 600;
    const top = Math.max(0, this.scroller.scrollTop - overscan);
    const bottom = this.scroller.scrollTop + this.scroller.clientHeight + overscan;
    const first = this.indexAt(top);
    const wanted = new Set<string>();
    let from = -1;
    for (let i = first; i < this.count && this.offsets[i] < bottom; i++) {
      const key = this.options.key(i);
      wanted.add(key);
      let row = this.mounted.get(key);
      if (!row || row.index !== i) {
        if (row) this.unmount(row.el);
        const el = this.options.render(i);
        el.dataset.vlKey = key;
        el.classList.add("vl-row");
        el.style.transform = `translateY(${this.offsets[i]}px)`;
        this.spacer.append(el);
        row = { index: i, el };
        this.mounted.set(key, row);
        this.resize.observe(el);
        if (this.measure(i, el) && (from < 0 || i < from)) from = i;
      }
    }
    for (const [key, row] of this.mounted) {
      if (!wanted.has(key)) {
        this.unmount(row.el);
        this.mounted.delete(key);
      }
    }
    if (from >= 0) this.relayout(from);
  }
}
