import type { Scene, SceneNode } from "./scene.ts";
import { drawable } from "./to-svg.ts";
import { textWidth } from "./text-width.ts";
import { TYPE } from "./theme.ts";

/**
 * Checks for figure tests: what a scene draws must lie inside its viewBox,
 * with every coordinate finite, and every label's measured box inside too.
 * Returns one line per problem (empty when the scene is sound).
 *
 * @example sceneProblems(metricIntervals(rows, { width: 640 })) // []
 */
export function sceneProblems(scene: Scene, slack = 1): string[] {
  const problems: string[] = [];
  const inside = (what: string, x: number, y: number) => {
    if (!(x >= -slack && x <= scene.width + slack && y >= -slack && y <= scene.height + slack))
      problems.push(`${what} at (${x}, ${y}) is outside 0 0 ${scene.width} ${scene.height}`);
  };
  const visit = (nodes: readonly SceneNode[], dx: number, dy: number) => {
    for (const n of nodes) {
      if (!drawable(n)) continue;
      switch (n.type) {
        case "g":
          visit(n.children, dx + (n.x ?? 0), dy + (n.y ?? 0));
          break;
        case "rect":
          inside("rect", dx + n.x, dy + n.y);
          inside("rect end", dx + n.x + n.width, dy + n.y + n.height);
          break;
        case "line":
          inside("line start", dx + n.x1, dy + n.y1);
          inside("line end", dx + n.x2, dy + n.y2);
          break;
        case "circle":
          inside("circle", dx + n.cx, dy + n.cy);
          break;
        case "path":
          for (const [, x, y] of n.d.matchAll(/(-?[\d.]+(?:e-?\d+)?),(-?[\d.]+(?:e-?\d+)?)/g))
            inside("path point", dx + Number(x), dy + Number(y));
          break;
        case "text": {
          const w = textWidth(n.text, n.size ?? TYPE.small);
          const x0 = n.anchor === "middle" ? n.x - w / 2 : n.anchor === "end" ? n.x - w : n.x;
          inside(`text "${n.text}" start`, dx + x0, dy + n.y);
          inside(`text "${n.text}" end`, dx + x0 + w, dy + n.y);
          break;
        }
      }
    }
  };
  visit(scene.children, 0, 0);
  return problems;
}

/**
 * An SVG string with one element per line, indented by depth: golden files that diff line by line.
 *
 * @example prettySvg('<svg><g><line/></g></svg>') // "<svg>\n  <g>\n    <line/>\n  </g>\n</svg>\n"
 */
export function prettySvg(svg: string): string {
  const tokens = svg.match(/<[^>]+>|[^<]+/g) ?? [];
  const lines: string[] = [];
  let depth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.startsWith("</")) {
      depth--;
      lines.push(`${"  ".repeat(depth)}${t}`);
    } else if (t.startsWith("<")) {
      // An element holding only text (and perhaps a title) stays on one line: <text …>label</text>.
      const close = t.endsWith("/>");
      const next = tokens[i + 1];
      const after = tokens[i + 2];
      if (!close && next && !next.startsWith("<") && after?.startsWith("</")) {
        lines.push(`${"  ".repeat(depth)}${t}${next}${after}`);
        i += 2;
        continue;
      }
      lines.push(`${"  ".repeat(depth)}${t}`);
      if (!close) depth++;
    } else lines.push(`${"  ".repeat(depth)}${t}`);
  }
  return lines.join("\n") + "\n";
}

/**
 * Problems with an SVG string as `toSvg` should write it: every tag is a
 * whitelisted element with `name="value"` attributes, no value or text holds
 * a raw `<`, `>` or unescaped `&`, no number is NaN or Infinity.
 *
 * @example svgProblems('<svg><text x="1">a &lt; b</text></svg>') // []
 */
export function svgProblems(svg: string): string[] {
  const problems: string[] = [];
  const element = /^<\/?(svg|desc|title|g|rect|line|circle|path|text)((?: [a-zA-Z][a-zA-Z0-9:-]*="[^"<>]*")*)\s*\/?>$/;
  const entity = /&(?!(amp|lt|gt|quot|#39);)/;
  for (const token of svg.match(/<[^>]*>|[^<]+/g) ?? []) {
    if (token.startsWith("<")) {
      const m = element.exec(token);
      if (!m) problems.push(`not a whitelisted element: ${token.slice(0, 80)}`);
      else if (entity.test(m[2] ?? "")) problems.push(`unescaped & in ${token.slice(0, 80)}`);
      if (/NaN|Infinity/.test(token)) problems.push(`non-finite number in ${token.slice(0, 80)}`);
    } else if (/[<>]/.test(token) || entity.test(token)) problems.push(`unescaped text: ${token.slice(0, 80)}`);
  }
  return problems;
}
