/**
 * The few pi-tui components the chat draws itself: a line cut to the width (the footer, the
 * titles above selectors) and the last rows of a wrapped text (thinking in progress). pi-tui's
 * Text wraps and grows; these never take more rows than they are given.
 */
import { type Component, Text, truncateToWidth } from "@mariozechner/pi-tui";

/** A single line, cut to the width; a function is asked again on every frame. */
export class Line implements Component {
  constructor(private readonly text: string | ((width: number) => string)) {}
  render(width: number): string[] {
    const text = typeof this.text === "string" ? this.text : this.text(width);
    return [truncateToWidth(text, width)];
  }
  invalidate(): void {}
}

/** The last rows of a text as wrapped at the width: thinking in progress, however long its lines. */
export class Tail implements Component {
  private readonly inner = new Text("", 1, 0);
  constructor(private readonly maxRows: number) {}
  setText(text: string): void {
    this.inner.setText(text);
  }
  render(width: number): string[] {
    return this.inner.render(width).slice(-this.maxRows);
  }
  invalidate(): void {
    this.inner.invalidate();
  }
}
