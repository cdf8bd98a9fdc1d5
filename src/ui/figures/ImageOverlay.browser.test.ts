import { flushSync, mount, unmount } from "svelte";
import { afterEach, expect, it } from "vitest";
import { attentionOverlay } from "../../figures/attention-overlay.ts";
import ImageOverlay from "./ImageOverlay.svelte";

/** A small grey PNG, drawn by the browser itself. */
function png(): string {
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 4;
  const context = canvas.getContext("2d")!;
  context.fillStyle = "#888";
  context.fillRect(0, 0, 4, 4);
  return canvas.toDataURL("image/png");
}

let mounted: ReturnType<typeof mount> | undefined;
afterEach(() => {
  if (mounted) unmount(mounted);
  mounted = undefined;
  document.body.innerHTML = "";
});

function render(src: string | undefined) {
  const scene = attentionOverlay([0, 0.1, 0.3, 0.6], { width: 120, rows: 2, cols: 2, opacity: 0.8, label: "case c1" });
  const target = document.createElement("div");
  document.body.append(target);
  mounted = mount(ImageOverlay, {
    target,
    props: { scene, src, alt: "the image of case c1", size: 120, testid: "ov" },
  });
  flushSync();
  return { target, scene };
}

it("draws the attention cells over the image, not under it, at the opacity asked", async () => {
  const { target } = render(png());
  const img = target.querySelector("img")!;
  await img.decode();
  const svg = target.querySelector('[data-testid="ov"] svg')!;
  const cells = [...svg.querySelectorAll("rect.cell")];
  expect(cells).toHaveLength(4);
  expect(Math.max(...cells.map((c) => Number(c.getAttribute("opacity"))))).toBeCloseTo(0.8, 6);
  // The strongest cell's centre: the topmost element there is the overlay's, and the image lies under it.
  const strongest = cells.find((c) => Number(c.getAttribute("opacity")) > 0.79)!.getBoundingClientRect();
  const x = strongest.left + strongest.width / 2;
  const y = strongest.top + strongest.height / 2;
  const stack = document.elementsFromPoint(x, y);
  expect(svg.contains(stack[0]!)).toBe(true);
  expect(stack).toContain(img);
  const box = img.getBoundingClientRect();
  expect([box.width, box.height]).toEqual([120, 120]);
  expect(box.left).toBeCloseTo(svg.getBoundingClientRect().left, 0);
  expect(box.top).toBeCloseTo(svg.getBoundingClientRect().top, 0);
});

it("without an image says so under the cells, and the cells read back as a table", () => {
  const { target } = render(undefined);
  expect(target.querySelector("img")).toBeNull();
  expect(target.textContent).toContain("image not in this report or store");
  const toggle = [...target.querySelectorAll("button")].find((b) => b.textContent === "Show as table")!;
  toggle.click();
  flushSync();
  const rows = [...target.querySelectorAll("tbody tr")].map((r) => r.textContent);
  expect(rows).toHaveLength(4);
  expect(rows[3]).toContain("row 2, column 2");
});
