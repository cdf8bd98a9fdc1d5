import { TYPE } from "./theme.ts";
import type { Scene, SceneNode } from "./scene.ts";

/**
 * The one exit point of the figure module: a `Scene` as an SVG string (for
 * the HTML export, in Node, with no DOM), and the attribute lists the page's
 * `Figure.svelte` spreads onto live nodes — the same function for both, so
 * the page and the export draw the same thing. Text is escaped here and
 * nowhere else; numbers are rounded here; a node with a coordinate that is
 * not a finite number is dropped here (with its children), never drawn at 0.
 */

/**
 * A coordinate as written: rounded to two decimals, no "-0".
 *
 * @example num(12.3456) // "12.35"
 */
export function num(x: number): string {
  const r = Math.round(x * 100) / 100;
  return String(Object.is(r, -0) ? 0 : r);
}

const ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/**
 * Text safe inside an element or a quoted attribute.
 *
 * @example escapeXml('a < b & "c"') // "a &lt; b &amp; &quot;c&quot;"
 */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const finite = (...xs: (number | undefined)[]) => xs.every((x) => x === undefined || Number.isFinite(x));

/**
 * Can this node be drawn? Every coordinate and size it has is a finite number
 * (sizes and radii not negative) and a path's `d` has no NaN in it.
 *
 * @example drawable({ type: "circle", cx: NaN, cy: 4, r: 3 }) // false
 */
export function drawable(node: SceneNode): boolean {
  const common = finite(node.strokeWidth, node.opacity);
  switch (node.type) {
    case "g":
      return common && finite(node.x, node.y);
    case "rect":
      return common && finite(node.x, node.y, node.width, node.height, node.rx) && node.width >= 0 && node.height >= 0;
    case "line":
      return common && finite(node.x1, node.y1, node.x2, node.y2);
    case "circle":
      return common && finite(node.cx, node.cy, node.r) && node.r >= 0;
    case "path":
      return common && node.d !== "" && !/NaN|Infinity/.test(node.d);
    case "text":
      return common && finite(node.x, node.y, node.size);
  }
}

/** An attribute list: names and already-formatted (unescaped) values, in a fixed order. */
export type Attributes = Record<string, string>;

/**
 * The SVG attributes of one node, formatted (escape them when writing a
 * string; a DOM escapes them itself).
 *
 * @example nodeAttributes({ type: "line", x1: 0, y1: 0.5, x2: 10, y2: 0.5, stroke: "#dcdce0" })
 *   // { x1: "0", y1: "0.5", x2: "10", y2: "0.5", stroke: "#dcdce0" }
 */
export function nodeAttributes(node: SceneNode): Attributes {
  const a: Attributes = {};
  switch (node.type) {
    case "g":
      if ((node.x ?? 0) !== 0 || (node.y ?? 0) !== 0)
        a["transform"] = `translate(${num(node.x ?? 0)},${num(node.y ?? 0)})`;
      break;
    case "rect":
      Object.assign(a, { x: num(node.x), y: num(node.y), width: num(node.width), height: num(node.height) });
      if (node.rx !== undefined) a["rx"] = num(node.rx);
      break;
    case "line":
      Object.assign(a, { x1: num(node.x1), y1: num(node.y1), x2: num(node.x2), y2: num(node.y2) });
      break;
    case "circle":
      Object.assign(a, { cx: num(node.cx), cy: num(node.cy), r: num(node.r) });
      break;
    case "path":
      a["d"] = node.d;
      break;
    case "text":
      Object.assign(a, { x: num(node.x), y: num(node.y) });
      if (node.anchor && node.anchor !== "start") a["text-anchor"] = node.anchor;
      if (node.baseline && node.baseline !== "auto") a["dominant-baseline"] = node.baseline;
      if (node.size !== undefined) a["font-size"] = num(node.size);
      if (node.weight === "bold") a["font-weight"] = "bold";
      break;
  }
  if (node.class) a["class"] = node.class;
  if (node.fill !== undefined) a["fill"] = node.fill;
  if (node.stroke !== undefined) a["stroke"] = node.stroke;
  if (node.strokeWidth !== undefined) a["stroke-width"] = num(node.strokeWidth);
  if (node.strokeDasharray !== undefined) a["stroke-dasharray"] = node.strokeDasharray;
  if (node.opacity !== undefined) a["opacity"] = num(node.opacity);
  // A node with a tip is a graphic with a name of its own (its <title>), readable in the export too.
  if (node.tip) a["role"] = "img";
  return a;
}

/**
 * Does any node of the scene carry a tip? Then the figure is a group of named parts, not one image.
 *
 * @example hasTips(gateIntervals(tests, { width: 640 })) // true: each interval is named by its tip
 */
export function hasTips(scene: Scene): boolean {
  const any = (nodes: readonly SceneNode[]): boolean =>
    nodes.some((n) => !!n.tip || (n.type === "g" && any(n.children)));
  return any(scene.children);
}

/**
 * The `<svg>` element's attributes: size, viewBox, font, and its accessible
 * name. A figure whose parts have tips is a `group` (its named parts stay
 * reachable); one without is a single `img`.
 *
 * @example rootAttributes(scene)["viewBox"] // "0 0 640 180"
 */
export function rootAttributes(scene: Scene): Attributes {
  return {
    xmlns: "http://www.w3.org/2000/svg",
    width: num(scene.width),
    height: num(scene.height),
    viewBox: `0 0 ${num(scene.width)} ${num(scene.height)}`,
    role: hasTips(scene) ? "group" : "img",
    "aria-label": scene.label,
    "font-family": TYPE.font,
    "font-size": num(TYPE.small),
    class: "figure",
  };
}

function attrs(a: Attributes): string {
  return Object.entries(a)
    .map(([k, v]) => ` ${k}="${escapeXml(v)}"`)
    .join("");
}

function write(node: SceneNode, out: string[]): void {
  if (!drawable(node)) return;
  const title = node.tip ? `<title>${escapeXml(node.tip)}</title>` : "";
  const open = `<${node.type}${attrs(nodeAttributes(node))}`;
  if (node.type === "g") {
    out.push(`${open}>${title}`);
    for (const child of node.children) write(child, out);
    out.push("</g>");
  } else if (node.type === "text") out.push(`${open}>${title}${escapeXml(node.text)}</text>`);
  else out.push(title ? `${open}>${title}</${node.type}>` : `${open}/>`);
}

/**
 * The scene as a standalone SVG string (no scripts, no external references),
 * to inline into an HTML page or save as a file.
 *
 * @example toSvg(metricIntervals(rows, { width: 640 })) // '<svg xmlns="http://www.w3.org/2000/svg" width="640" …'
 */
export function toSvg(scene: Scene): string {
  const out: string[] = [`<svg${attrs(rootAttributes(scene))}>`];
  if (scene.description) out.push(`<desc>${escapeXml(scene.description)}</desc>`);
  for (const node of scene.children) write(node, out);
  out.push("</svg>");
  return out.join("");
}
