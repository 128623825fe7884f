/**
 * Entry bodies as DOM: Markdown through marked, sanitized by DOMPurify (a session holds text
 * from models and tools, never trusted as HTML); thinking and long tool output collapsed; images
 * inline; a pruned result with its archived original one click away.
 */
import DOMPurify from "dompurify";
import { Marked } from "marked";
import type { Block } from "../blocks.js";

const marked = new Marked({ gfm: true, breaks: false, async: false });

/** Output longer than this many lines starts collapsed. */
const LONG_LINES = 12;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === "class") el.className = value;
    else el.setAttribute(name, value);
  }
  el.append(...children);
  return el;
}

/**
 * Session text is not trusted: besides scripts, no form (a planted "re-enter your key" form could
 * post it away), no style element or attribute (it could restyle the whole page), no base, no
 * class or id (the page's own classes would draw it as bonsai's notice, leaf badge or entry link,
 * or lay it over other cards), and no dialog or image map (an open dialog over the page, links
 * over an image).
 */
const SANITIZE = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ["form", "input", "button", "textarea", "select", "option", "style", "link", "meta", "base", "dialog", "map", "area"],
  FORBID_ATTR: ["style", "action", "formaction", "class", "id"],
};

export function markdown(text: string): HTMLElement {
  const div = h("div", { class: "md" });
  const html = marked.parse(text) as string;
  div.innerHTML = DOMPurify.sanitize(html, SANITIZE);
  for (const a of div.querySelectorAll("a")) {
    a.setAttribute("rel", "noopener noreferrer");
    a.setAttribute("target", "_blank");
  }
  return div;
}

function clippedNote(clipped: number | undefined): Node[] {
  return clipped ? [h("div", { class: "clipped" }, `… ${clipped.toLocaleString("en-US")} more characters left out of this export`)] : [];
}

function collapsible(summary: string, body: Node[], open: boolean, cls: string): HTMLElement {
  const details = h("details", { class: cls }, h("summary", {}, summary), ...body);
  if (open) details.open = true;
  return details;
}

export function renderBlock(block: Block): HTMLElement {
  switch (block.kind) {
    case "text":
      return h("div", { class: "block text" }, markdown(block.text), ...clippedNote(block.clipped));
    case "thinking":
      return collapsible("thinking", [h("div", { class: "thinking-body" }, block.text), ...clippedNote(block.clipped)], false, "block thinking");
    case "toolCall":
      return collapsible(`→ ${block.name}`, [h("pre", { class: "args" }, block.args), ...clippedNote(block.clipped)], block.args.split("\n").length <= LONG_LINES, "block tool-call");
    case "output": {
      const lines = block.text.split("\n").length;
      const title = `${block.isError ? "error · " : ""}${block.title} · ${lines.toLocaleString("en-US")} ${lines === 1 ? "line" : "lines"}`;
      return collapsible(title, [h("pre", { class: "output" }, block.text), ...clippedNote(block.clipped)], lines <= LONG_LINES, `block output${block.isError ? " error" : ""}`);
    }
    case "image": {
      const img = h("img", { class: "block image", alt: "image", src: `data:${block.mimeType};base64,${block.data}` });
      return img;
    }
    case "pruned": {
      const wrap = h("div", { class: "block pruned" }, h("div", { class: "notice" }, `✂ ${block.notice}`));
      if (block.original) {
        const original = h("div", { class: "original" });
        const button = h("button", { class: "show-original", type: "button" }, "show archived original");
        button.addEventListener("click", () => {
          if (original.childElementCount === 0) original.append(...block.original!.map(renderBlock));
          original.hidden = !original.hidden;
          button.textContent = original.hidden ? "show archived original" : "hide archived original";
        });
        original.hidden = true;
        wrap.append(button, original);
      } else {
        wrap.append(h("div", { class: "muted" }, "the original is not in this session's archive"));
      }
      return wrap;
    }
    case "summary":
      return h("div", { class: "block summary" }, markdown(block.text), ...clippedNote(block.clipped));
    case "meta":
      return h("div", { class: "block meta" }, block.text, ...clippedNote(block.clipped));
  }
}

/**
 * A name, id or place from the session as the page's header shows it: clipped (a 20 KB name
 * would push everything else off the page), with no control character or bidirectional override
 * (which would turn the real counts after it around).
 */
export function headerText(text: string, max: number): string {
  const plain = text.replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, "?");
  return plain.length > max ? `${plain.slice(0, max - 1)}…` : plain;
}
