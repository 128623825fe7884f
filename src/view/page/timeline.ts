/**
 * The token timeline as plain SVG: bonsai's estimate of the context per turn on the active path
 * (a line, with its drops at compactions), the provider's reported usage beside it (dots), and
 * the compaction threshold (a dashed line). Each point carries its entry id and tokens, and a
 * click selects its entry.
 */
import type { TimelinePoint } from "../timeline.js";

const SVG = "http://www.w3.org/2000/svg";
/** above this many points, dots are left out and only the line is drawn */
const MAX_DOTS = 2000;

function el(tag: string, attrs: Record<string, string | number>): SVGElement {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

const fmt = (n: number) => n.toLocaleString("en-US");

function legend(items: [string, string][]): HTMLElement {
  const div = document.createElement("div");
  div.className = "timeline-legend";
  for (const [kind, text] of items) {
    const item = document.createElement("span");
    item.className = `legend-${kind}`;
    item.textContent = text;
    div.append(item);
  }
  return div;
}

export function renderTimeline(
  container: HTMLElement,
  points: readonly TimelinePoint[],
  threshold: number | null,
  onSelect: (id: string) => void,
): void {
  container.replaceChildren();
  if (points.length === 0) {
    container.textContent = "no turns on the active path yet";
    return;
  }
  container.append(
    legend([
      ["estimate", "bonsai's estimate of the context per turn"],
      ["usage", "reported by the provider"],
      ["compaction", "compaction"],
      ["threshold", threshold === null ? "threshold unknown (no context window)" : "compaction threshold"],
    ]),
  );
  const width = Math.max(200, container.clientWidth || 800);
  const height = 124;
  const pad = { left: 56, right: 12, top: 10, bottom: 18 };
  const max = Math.max(1, threshold ?? 0, ...points.map((p) => Math.max(p.estimate, p.usage ?? 0, p.tokensBefore ?? 0))) * 1.05;
  const x = (i: number) => pad.left + (points.length === 1 ? 0 : (i / (points.length - 1)) * (width - pad.left - pad.right));
  const y = (v: number) => pad.top + (1 - v / max) * (height - pad.top - pad.bottom);
  const svg = el("svg", { width, height, viewBox: `0 0 ${width} ${height}`, class: "timeline-svg", role: "img", "aria-label": "context tokens per turn" });
  for (const frac of [0, 0.5, 1]) {
    const v = Math.round((max / 1.05) * frac);
    svg.append(el("line", { x1: pad.left, x2: width - pad.right, y1: y(v), y2: y(v), class: "grid" }));
    const label = el("text", { x: pad.left - 6, y: y(v) + 4, class: "axis", "text-anchor": "end" });
    label.textContent = fmt(v);
    svg.append(label);
  }
  if (threshold !== null) {
    svg.append(el("line", { x1: pad.left, x2: width - pad.right, y1: y(threshold), y2: y(threshold), class: "threshold" }));
    const label = el("text", { x: width - pad.right, y: y(threshold) - 4, class: "axis threshold-label", "text-anchor": "end" });
    label.textContent = `compaction threshold ${fmt(threshold)}`;
    svg.append(label);
  }
  // the estimate: at a compaction the line drops from what it recorded before to what is left
  const line: string[] = [];
  points.forEach((p, i) => {
    if (p.kind === "compaction" && p.tokensBefore !== undefined) line.push(`${x(i)},${y(p.tokensBefore)}`);
    line.push(`${x(i)},${y(p.estimate)}`);
  });
  svg.append(el("polyline", { points: line.join(" "), class: "estimate-line" }));
  if (points.length <= MAX_DOTS) {
    points.forEach((p, i) => {
      if (p.usage !== undefined) {
        const dot = el("circle", { cx: x(i), cy: y(p.usage), r: 3, class: "pt pt-usage", "data-id": p.id, "data-tokens": p.usage });
        const title = el("title", {});
        title.textContent = `${p.id}: provider reported ${fmt(p.usage)} tokens`;
        dot.append(title);
        dot.addEventListener("click", () => onSelect(p.id));
        svg.append(dot);
      }
      const dot = el("circle", {
        cx: x(i),
        cy: y(p.estimate),
        r: p.kind === "compaction" ? 5 : 3,
        class: `pt pt-estimate${p.kind === "compaction" ? " pt-compaction" : ""}`,
        "data-id": p.id,
        "data-tokens": p.estimate,
        "data-kind": p.kind,
      });
      const title = el("title", {});
      title.textContent =
        p.kind === "compaction"
          ? `${p.id}: compaction, ${fmt(p.tokensBefore ?? 0)} → ${fmt(p.estimate)} tokens`
          : `${p.id}: ~${fmt(p.estimate)} tokens (bonsai's estimate)${p.usage !== undefined ? `, ${fmt(p.usage)} reported` : ""}`;
      dot.append(title);
      dot.addEventListener("click", () => onSelect(p.id));
      svg.append(dot);
    });
  }
  container.append(svg);
}
