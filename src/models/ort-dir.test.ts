import { expect, it } from "vitest";
import { ortDir } from "./ort-dir.ts";

it("names the hashed folder the build serves ONNX Runtime's wasm from (the Vite config's define, tests included)", () => {
  expect(ortDir()).toMatch(/^ort\/[0-9a-f]{12}\/$/);
});
