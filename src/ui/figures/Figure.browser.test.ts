import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import { calibration } from "../../figures/calibration.ts";
import { gateIntervals } from "../../figures/gate-intervals.ts";
import { metricIntervals } from "../../figures/metric-intervals.ts";
import { powerCurve } from "../../figures/power-curve.ts";
import type { Scene } from "../../figures/scene.ts";
import { toSvg } from "../../figures/to-svg.ts";
import Figure from "./Figure.svelte";

/**
 * One canonical text for an SVG tree: tag names, attributes sorted, text, children in order; comments and
 * whitespace-only text (Svelte's block anchors) are left out, and so is `tabindex` — the one attribute the
 * page adds (its keyboard layer) that a static export has no use for.
 */
function canonical(node: Node): string {
  if (node.nodeType === Node.TEXT_NODE) return node.textContent!.trim() === "" ? "" : JSON.stringify(node.textContent);
  if (node.nodeType !== Node.ELEMENT_NODE) return "";
  const el = node as Element;
  const attrs = [...el.attributes]
    .filter((a) => a.name !== "tabindex")
    .map((a) => `${a.name}=${JSON.stringify(a.value)}`)
    .sort();
  const children = [...el.childNodes].map(canonical).filter(Boolean);
  return `<${el.localName} ${attrs.join(" ")}>${children.join("")}</${el.localName}>`;
}

const scenes: Record<string, Scene> = {
  "metric intervals of two runs (a non-finite estimate among them)": metricIntervals(
    [
      { metric: "pass", series: "baseline", mean: 0.81, lo: 0.75, hi: 0.86, n: 200, method: "wilson" },
      { metric: "pass", series: "candidate", mean: 0.74, lo: 0.68, hi: 0.8, n: 200, method: "wilson" },
      { metric: "yesNo <&\"'>", series: "baseline", mean: Number.NaN, lo: Number.NaN, hi: Number.NaN },
      {
        metric: "a-metric-name-far-too-long-to-fit-beside-the-axis-of-this-figure",
        series: "candidate",
        mean: 0.5,
        lo: 0.4,
        hi: 0.6,
      },
    ],
    { width: 560 },
  ),
  "gate intervals": gateIntervals(
    [
      {
        metric: "pass",
        diff: -0.1,
        lo: -0.195,
        hi: 0.004,
        gated: true,
        tolerance: 0.03,
        verdict: "inconclusive",
        p: 0.125,
      },
      { metric: "yesNo", diff: -0.24, lo: -0.37, hi: -0.13, gated: true, tolerance: 0.05, verdict: "fail" },
      { metric: "exact", diff: 0.02, lo: -0.01, hi: 0.05, gated: false },
    ],
    { width: 640 },
  ),
  "power curve": powerCurve(
    [
      { x: 0.01, power: 0.1 },
      { x: 0.03, power: 0.5 },
      { x: 0.05, power: 0.88 },
      { x: 0.07, power: Number.NaN },
    ],
    { width: 600, along: "drop", method: "McNemar (Connor 1987)", marker: { at: 0.03, label: "tolerance" } },
  ),
  calibration: calibration(
    [
      { repeats: 1, tolerance: 0.071, aaPassAtTarget: 0.6 },
      { repeats: 3, tolerance: 0.028, aaPassAtTarget: 0.96 },
    ],
    { width: 480, target: 0.03, recommended: 3 },
  ),
};

let mounted: ReturnType<typeof mount> | undefined;
afterEach(() => {
  if (mounted) unmount(mounted);
  mounted = undefined;
  document.body.innerHTML = "";
});

function render(scene: Scene) {
  const target = document.createElement("div");
  document.body.append(target);
  mounted = mount(Figure, { target, props: { scene, testid: "fig" } });
  flushSync();
  return target;
}

describe("Figure.svelte draws what toSvg writes", () => {
  for (const [name, scene] of Object.entries(scenes))
    it(`the page's <svg> equals the export's for ${name}`, () => {
      const target = render(scene);
      const live = target.querySelector("svg")!;
      const exported = new DOMParser().parseFromString(toSvg(scene), "image/svg+xml");
      expect(exported.querySelector("parsererror")).toBeNull();
      expect(canonical(live)).toBe(canonical(exported.documentElement));
      // the live nodes are SVG nodes, not unknown HTML elements
      for (const el of live.querySelectorAll("*")) expect(el.namespaceURI).toBe("http://www.w3.org/2000/svg");
    });
});

describe("Figure.svelte's keyboard tips and table", () => {
  it("reaches every tip by keyboard, one tab stop per figure, and shows the focused tip", () => {
    const scene = gateIntervals(
      [
        { metric: "pass", diff: -0.1, lo: -0.195, hi: 0.004, gated: true, tolerance: 0.03, verdict: "inconclusive" },
        { metric: "yesNo", diff: -0.24, lo: -0.37, hi: -0.13, gated: true, tolerance: 0.03, verdict: "fail" },
        { metric: "exact", diff: 0.02, lo: -0.01, hi: 0.05, gated: false },
      ],
      { width: 640 },
    );
    const target = render(scene);
    const focusable = [...target.querySelectorAll<SVGElement>("svg [tabindex]")];
    expect(focusable.length).toBe(3);
    expect(focusable.filter((el) => el.getAttribute("tabindex") === "0")).toHaveLength(1);
    focusable[0]!.focus();
    flushSync();
    expect(target.querySelector('[role="tooltip"]')!.textContent).toContain("pass: −10.0 pts [−19.5 pts, +0.4 pts]");
    target.querySelector("svg")!.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowDown", bubbles: true }));
    flushSync();
    expect(document.activeElement).toBe(focusable[1]);
    expect(target.querySelector('[role="tooltip"]')!.textContent).toContain("yesNo: −24.0 pts");
    expect(focusable[1]!.getAttribute("tabindex")).toBe("0");
    target.querySelector("svg")!.dispatchEvent(new KeyboardEvent("keydown", { key: "End", bubbles: true }));
    flushSync();
    expect(target.querySelector('[role="tooltip"]')!.textContent).toContain("exact: +2.0 pts");
    target.querySelector("svg")!.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    flushSync();
    expect(target.querySelector('[role="tooltip"]')).toBeNull();
  });

  it("shows the figure as its table and back", () => {
    const scene = scenes["calibration"]!;
    const target = render(scene);
    const toggle = target.querySelector("button")!;
    expect(toggle.getAttribute("aria-pressed")).toBe("false");
    toggle.click();
    flushSync();
    expect(target.querySelector("svg")).toBeNull();
    const rows = [...target.querySelectorAll("tbody tr")].map((tr) => [...tr.children].map((td) => td.textContent));
    expect(rows).toEqual(scene.table.rows);
    expect(target.querySelector("caption")!.textContent).toBe("A/A noise floor by repeats");
    toggle.click();
    flushSync();
    expect(target.querySelector("svg")).not.toBeNull();
  });

  it("reports the width it is given, so a page can build the scene for it", async () => {
    const target = document.createElement("div");
    target.style.width = "512px";
    document.body.append(target);
    let width: number | undefined;
    mounted = mount(Figure, {
      target,
      props: {
        scene: scenes["calibration"]!,
        get width() {
          return width;
        },
        set width(w) {
          width = w;
        },
      },
    });
    // Measured once the browser has laid the frame out (a ResizeObserver), never by forcing a layout at mount.
    expect(width).toBeUndefined();
    await expect.poll(() => width).toBe(512);
    target.style.width = "300px";
    await expect.poll(() => width).toBe(300);
  });
});
