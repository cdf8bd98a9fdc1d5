/**
 * Image crops for the repair scaffolds: a zoomed window of the image, scaled
 * back to the original size (nearest neighbour), as RGBA pixels a model accepts.
 */
import type { ImagePixels } from "../core/index.ts";

/**
 * The window of `fraction` × the image's size centred on (cx, cy) (in 0…1 units,
 * clamped inside the image), scaled back up to the full size.
 * Example: `zoom(pixels, 0.25, 0.25, 0.5)` → the top-left quarter, enlarged ×2.
 */
export function zoom(image: ImagePixels, cx: number, cy: number, fraction: number): ImagePixels {
  const { width: W, height: H, data } = image;
  if (!(fraction > 0 && fraction <= 1)) throw new RangeError(`zoom(): fraction ${fraction} must lie in (0, 1]`);
  const w = Math.max(1, Math.round(W * fraction));
  const h = Math.max(1, Math.round(H * fraction));
  const x0 = Math.min(Math.max(0, Math.round(cx * W - w / 2)), W - w);
  const y0 = Math.min(Math.max(0, Math.round(cy * H - h / 2)), H - h);
  const out = new Uint8ClampedArray(W * H * 4);
  for (let y = 0; y < H; y++) {
    const sy = y0 + Math.min(h - 1, Math.floor((y * h) / H));
    for (let x = 0; x < W; x++) {
      const sx = x0 + Math.min(w - 1, Math.floor((x * w) / W));
      const from = (sy * W + sx) * 4;
      const to = (y * W + x) * 4;
      out[to] = data[from]!;
      out[to + 1] = data[from + 1]!;
      out[to + 2] = data[from + 2]!;
      out[to + 3] = data[from + 3] ?? 255;
    }
  }
  return { width: W, height: H, data: out };
}

/** The centre (0…1 units) of cell `index` of a rows × cols grid laid row-major over the image. */
export function cellCentre(index: number, rows: number, cols: number): { cx: number; cy: number } {
  return { cx: ((index % cols) + 0.5) / cols, cy: (Math.floor(index / cols) + 0.5) / rows };
}
