import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { encode as encodeJpeg } from "jpeg-js";
import { toRgb } from "../models/image.ts";
import { modelImage, portablePath, readConfined, readRegularFile } from "./confined.ts";

const top = mkdtempSync(join(tmpdir(), "evalrx-confined-"));
const folder = join(top, "dataset");
mkdirSync(join(folder, "images"), { recursive: true });
mkdirSync(join(top, "outside"));
writeFileSync(join(folder, "images", "ok.png"), "png bytes");
writeFileSync(join(top, "outside", "secret.png"), "secret");
symlinkSync(join(top, "outside", "secret.png"), join(folder, "images", "link-out.png"));
symlinkSync("ok.png", join(folder, "images", "link-in.png"));
symlinkSync("/dev/zero", join(folder, "images", "zero.png"));
symlinkSync("loop-b.png", join(folder, "images", "loop-a.png"));
symlinkSync("loop-a.png", join(folder, "images", "loop-b.png"));
execFileSync("mkfifo", [join(folder, "images", "fifo.png")]);
writeFileSync(join(folder, "images", "big.png"), new Uint8Array(2048));
afterAll(() => rmSync(top, { recursive: true, force: true }));

describe("readConfined: a file a dataset names, read only from inside its folder", () => {
  it("reads files inside, links that stay inside; a missing file is undefined", async () => {
    expect(new TextDecoder().decode(await readConfined(folder, "images/ok.png"))).toBe("png bytes");
    expect(new TextDecoder().decode(await readConfined(folder, "./images/link-in.png"))).toBe("png bytes");
    expect(await readConfined(folder, "images/none.png")).toBeUndefined();
  });

  it("refuses every way out and every file that is not a plain file, without hanging or reading it", async () => {
    const refused: [string, RegExp][] = [
      ["../outside/secret.png", /leaves the dataset's folder/],
      [join(top, "outside", "secret.png"), /is absolute/],
      ["/dev/zero", /is absolute/],
      ["images/link-out.png", /is a link that leads out of the dataset's folder/],
      ["images/zero.png", /is a link that leads out of the dataset's folder/],
      ["images/fifo.png", /is a FIFO \(named pipe\), not an image file/],
      ["images", /is a directory, not an image file/],
      ["images/loop-a.png", /loop of symbolic links/],
    ];
    for (const [ref, why] of refused)
      await expect(readConfined(folder, ref), ref).rejects.toMatchObject({ name: "RefusedFileError", message: why });
    await expect(readConfined(folder, "images/big.png", { maxBytes: 1024 })).rejects.toThrow(
      "'images/big.png' is 2048 bytes, over the 1024-byte limit for one image",
    );
  });

  it("readRegularFile refuses a FIFO or a device a user names, instead of hanging", async () => {
    await expect(readRegularFile(join(folder, "images", "fifo.png"), "dataset 'x'")).rejects.toThrow(
      /^dataset 'x': .*fifo\.png is a FIFO \(named pipe\), not a file$/,
    );
    await expect(readRegularFile("/dev/zero", "dataset 'zero'")).rejects.toThrow(/is a device file, not a file/);
    await expect(readRegularFile(join(folder, "nope.jsonl"), "dataset 'nope'")).rejects.toThrow(
      /^dataset 'nope': no such file/,
    );
  });
});

describe("modelImage and portablePath", () => {
  it("gives the runtime a JPEG as RGBA pixels (it reads PNG bytes itself)", () => {
    const jpeg = new Uint8Array(encodeJpeg({ width: 6, height: 4, data: new Uint8Array(96).fill(128) }, 90).data);
    const pixels = modelImage(jpeg);
    expect(pixels).toMatchObject({ width: 6, height: 4 });
    expect(toRgb(pixels)).toMatchObject({ width: 6, height: 4 });
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
    expect(modelImage(png)).toBe(png);
  });

  it("names a path without the local folders above the working one", () => {
    expect(portablePath(join(process.cwd(), "models", "tiny"))).toBe("models/tiny");
    expect(portablePath("/somewhere/else/model-dir")).toBe("model-dir");
    expect(portablePath("models/tiny-vlm")).toBe("models/tiny-vlm");
  });
});
