import { expect, it } from "vitest";
import { droppedImages } from "./dropped.browser.ts";
import { importDataset } from "./import.ts";
import pngUrl from "./fixtures/images/red.png?url";

it("a dataset dropped with its images finds them by relative path or by name, and stores each once", async () => {
  const png = new Uint8Array(await (await fetch(pngUrl)).arrayBuffer());
  const image = new File([png], "red.png", { type: "image/png" });
  const other = new File([new TextEncoder().encode("not an image")], "notes.png");
  const dataset = new File(
    [
      '{"id":"a","input":{"prompt":"p","image":"images/red.png"}}\n',
      '{"id":"b","input":{"prompt":"p","image":"./red.png"}}\n',
      '{"id":"c","input":{"prompt":"p","image":"images/missing.png"}}\n',
      '{"id":"d","input":{"prompt":"p","image":"notes.png"}}\n',
    ],
    "data.jsonl",
  );
  const stored: string[] = [];
  const images = droppedImages([dataset, image, other], dataset, async (_bytes, type) => void stored.push(type));
  const result = await importDataset(dataset.stream(), { name: dataset.name, images });
  expect(result.cases.map((c) => c.id)).toEqual(["a", "b"]);
  expect(result.cases[0]!.input.image).toMatch(/^sha256:[0-9a-f]{64}$/);
  expect(result.cases[1]!.input.image).toBe(result.cases[0]!.input.image);
  expect(stored).toEqual(["image/png"]);
  expect(result.problems.map((p) => [p.line, p.reason.split(":")[0]])).toEqual([
    [3, "image not found"],
    [4, "image 'notes.png' is not decodable"],
  ]);
});
