import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { toRgb } from "../src/models/image.ts";
import { decodedOnce, quotaMessage } from "./eval-job.ts";

it("a full quota says what is kept and how much space the rest needs", () => {
  expect(quotaMessage(400, 600, 512)).toBe(
    "The browser's storage is full: 400 of 600 trials are judged and kept; the other 200 need about 150.0 KB more. Free space (delete old runs or datasets), then Resume the run.",
  );
});

it("an image is decoded once into the pixels the model would decode; what is not a readable PNG is handed on as it is", () => {
  const png = new Uint8Array(readFileSync(join(import.meta.dirname, "../public/demo/images/scene-0001.png")));
  const pixels = decodedOnce(png);
  expect(pixels).not.toBeInstanceOf(Uint8Array);
  expect(toRgb(pixels)).toEqual(toRgb(png));
  const jpeg = Uint8Array.of(0xff, 0xd8, 0xff, 0xe0, 0, 0, 0, 0);
  expect(decodedOnce(jpeg)).toBe(jpeg);
  const broken = png.slice(0, 40); // the signature and IHDR, no image data
  expect(decodedOnce(broken)).toBe(broken);
});
