import { expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { readRunFile } from "./run-file.ts";

it("reads a run file and names what is wrong with one that is not", async () => {
  const text = readFileSync(new URL("./fixtures/run-export.json", import.meta.url), "utf8");
  const data = await readRunFile(new Blob([text]));
  expect(data.format).toBe("evalrx-run");
  await expect(readRunFile(new Blob(["{"]))).rejects.toThrow(/^not JSON: /);
  await expect(readRunFile(new Blob(['{"format":"x"}']))).rejects.toThrow(
    'not an EvalRx run export: format is "x", expected "evalrx-run"',
  );
});
