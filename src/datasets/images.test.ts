import { encode as encodePng } from "fast-png";
import { encode as encodeJpeg } from "jpeg-js";
import { describe, expect, it } from "vitest";
import { checkImage, imageDimensions, imageRefPath, sniffImage } from "./images.ts";

const png = (width: number, height: number) =>
  encodePng({ width, height, data: new Uint8Array(width * height * 3).fill(200), channels: 3 });
const jpeg = (width: number, height: number) =>
  new Uint8Array(encodeJpeg({ width, height, data: new Uint8Array(width * height * 4).fill(120) }, 80).data);

/** A PNG whose IHDR claims another size (its CRC is not rewritten: the header is a lie). */
function claiming(bytes: Uint8Array, width: number, height: number): Uint8Array {
  const out = bytes.slice();
  const view = new DataView(out.buffer);
  view.setUint32(16, width);
  view.setUint32(20, height);
  return out;
}

describe("imageRefPath: a dataset's image reference stays inside its folder", () => {
  it("resolves . and inner .. and keeps the segments", () => {
    expect(imageRefPath("images/./a/../scene-1.png")).toEqual({ segments: ["images", "scene-1.png"] });
    expect(imageRefPath("images\\scene-1.png")).toEqual({ segments: ["images", "scene-1.png"] });
  });
  it("refuses what leaves it, absolute paths, URLs, NUL and the folder itself, saying why", () => {
    const cases: [string, RegExp][] = [
      ["../outside/secret.png", /leaves the dataset's folder/],
      ["images/../../x.png", /leaves the dataset's folder/],
      ["/etc/passwd", /is absolute/],
      ["/dev/zero", /is absolute/],
      ["C:\\Windows\\win.ini", /is absolute/],
      ["\\\\host\\share\\x.png", /is absolute/],
      ["file:///etc/passwd", /is a URL/],
      ["https://example.com/x.png", /is a URL/],
      ["a\u0000.png", /holds a NUL/],
      [".", /names the dataset's folder itself/],
      ["", /empty/],
    ];
    for (const [ref, why] of cases) {
      const result = imageRefPath(ref);
      expect("reason" in result, ref).toBe(true);
      expect((result as { reason: string }).reason, ref).toMatch(why);
    }
  });
});

describe("checkImage: whole, decodable, within bounds", () => {
  it("reads PNG and JPEG sizes from their headers and decodes them in full", () => {
    expect(checkImage(png(12, 7))).toEqual({ type: "image/png", width: 12, height: 7 });
    expect(checkImage(jpeg(16, 9))).toEqual({ type: "image/jpeg", width: 16, height: 9 });
    expect(imageDimensions(jpeg(33, 5), "image/jpeg")).toEqual({ width: 33, height: 5 });
    expect(sniffImage(png(2, 2))).toEqual({ type: "image/png" });
  });

  it("refuses a header claiming 60000×60000 before decoding a pixel", () => {
    const started = performance.now();
    expect(checkImage(claiming(png(4, 4), 60000, 60000))).toEqual({
      reason: "60000×60000 pixels, over the 40-megapixel limit for one image",
    });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(checkImage(png(20, 20), { maxPixels: 100 })).toMatchObject({
      reason: "20×20 pixels, over the 100-pixel limit for one image",
    });
  });

  it("refuses a fake PNG: the right signature and end, a body that does not decode", () => {
    const real = png(8, 8);
    const fake = real.slice();
    fake.fill(0x41, 41, real.length - 12); // the IDAT payload overwritten, IEND kept
    expect(sniffImage(fake)).toMatchObject({ reason: expect.stringMatching(/^a PNG that does not decode/) });
    expect(checkImage(claiming(real, 9, 8))).toMatchObject({ reason: expect.stringMatching(/PNG/) });
    const text = new TextEncoder().encode("\x89PNG\r\n\x1a\n" + "not really".repeat(5) + "IEND\xaeB`\x82");
    expect("reason" in checkImage(text)).toBe(true);
  });

  it("refuses a corrupt JPEG, a truncated file, an empty image and a file over the byte bound", () => {
    const j = jpeg(16, 16);
    const broken = j.slice();
    broken.fill(0xff, 200, j.length - 2);
    expect("reason" in checkImage(broken)).toBe(true);
    expect(checkImage(j.subarray(0, 100))).toEqual({ reason: "a truncated JPEG (no end-of-image marker)" });
    expect(checkImage(claiming(png(1, 1), 0, 5))).toEqual({ reason: "an image of 0×5 pixels (empty)" });
    expect(checkImage(png(4, 4), { maxBytes: 10 })).toMatchObject({ reason: /over the 10-byte limit/ });
    expect(checkImage(new TextEncoder().encode("hello"))).toMatchObject({ reason: /not an image/ });
  });
});
