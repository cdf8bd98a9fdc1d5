import { describe, expect, it } from "vitest";
import type { Scene } from "./scene.ts";
import { drawable, escapeXml, hasTips, nodeAttributes, num, rootAttributes, toSvg } from "./to-svg.ts";

const scene = (children: Scene["children"], extra: Partial<Scene> = {}): Scene => ({
  width: 200,
  height: 100,
  label: "a test figure",
  children,
  table: { caption: "", columns: [], rows: [] },
  ...extra,
});

describe("toSvg", () => {
  it("writes a standalone SVG with a viewBox, the label and description, and each node's attributes", () => {
    const svg = toSvg(
      scene(
        [
          {
            type: "g",
            x: 10,
            y: 5,
            class: "row",
            children: [{ type: "rect", x: 0, y: 0, width: 20.005, height: 3, fill: "#0072b2" }],
          },
          { type: "line", x1: 0, y1: 0.5, x2: 100, y2: 0.5, stroke: "#1d1d1f", strokeDasharray: "4 3" },
          {
            type: "text",
            x: 4,
            y: 8,
            text: "pass",
            anchor: "end",
            baseline: "middle",
            weight: "bold",
            tip: "pass rate",
          },
        ],
        { description: "what it shows" },
      ),
    );
    expect(svg).toBe(
      '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100" viewBox="0 0 200 100" role="group" aria-label="a test figure" font-family="system-ui, -apple-system, &quot;Segoe UI&quot;, Roboto, sans-serif" font-size="11" class="figure">' +
        "<desc>what it shows</desc>" +
        '<g transform="translate(10,5)" class="row"><rect x="0" y="0" width="20.01" height="3" fill="#0072b2"/></g>' +
        '<line x1="0" y1="0.5" x2="100" y2="0.5" stroke="#1d1d1f" stroke-dasharray="4 3"/>' +
        '<text x="4" y="8" text-anchor="end" dominant-baseline="middle" font-weight="bold" role="img"><title>pass rate</title>pass</text>' +
        "</svg>",
    );
  });

  it("escapes every text and attribute value, here and nowhere else", () => {
    const evil = `</text><script>alert("x")</script>&'`;
    const svg = toSvg(
      scene([{ type: "text", x: 1, y: 1, text: evil, tip: evil, class: `a" onload="x` }], { label: evil }),
    );
    expect(svg).not.toContain("<script");
    expect(svg).not.toContain('" onload="');
    expect(svg).toContain("&lt;/text&gt;&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;");
    expect(escapeXml(`a < b & "c" 'd'`)).toBe("a &lt; b &amp; &quot;c&quot; &#39;d&#39;");
  });

  it("drops a node (and its children) whose coordinates are not finite numbers, never drawing it at 0", () => {
    const svg = toSvg(
      scene([
        { type: "circle", cx: Number.NaN, cy: 2, r: 3 },
        { type: "rect", x: 1, y: 1, width: -4, height: 2 },
        { type: "line", x1: 0, y1: 0, x2: Infinity, y2: 0 },
        { type: "g", x: Number.NaN, children: [{ type: "circle", cx: 1, cy: 1, r: 1 }] },
        { type: "path", d: "M0,0LNaN,4" },
        { type: "text", x: 1, y: 1, text: "kept" },
      ]),
    );
    expect(svg).not.toMatch(/circle|rect|line|<g|path|NaN|Infinity/);
    expect(svg).toContain(">kept</text>");
    expect(drawable({ type: "circle", cx: 1, cy: 1, r: 1, opacity: Number.NaN })).toBe(false);
  });

  it("rounds numbers to two decimals and never writes -0", () => {
    expect(num(12.3456)).toBe("12.35");
    expect(num(-0.001)).toBe("0");
    expect(num(1e-7)).toBe("0");
    expect(nodeAttributes({ type: "g", x: 0, y: 0, children: [] })).toEqual({});
  });

  it("makes a figure without tips one image, and one with tips a group of named parts", () => {
    const plain = scene([{ type: "circle", cx: 1, cy: 1, r: 1 }]);
    const tipped = scene([{ type: "g", children: [{ type: "circle", cx: 1, cy: 1, r: 1, tip: "one" }] }]);
    expect([hasTips(plain), rootAttributes(plain)["role"]]).toEqual([false, "img"]);
    expect([hasTips(tipped), rootAttributes(tipped)["role"]]).toEqual([true, "group"]);
    expect(nodeAttributes({ type: "circle", cx: 1, cy: 1, r: 1, tip: "one" })["role"]).toBe("img");
  });
});
