import { describe, expect, it } from "vitest";
import { folderProblems, inspectionProblems, modelFolder } from "./folder.ts";

const at = (...paths: string[]) => paths.map((path) => ({ path }));

describe("modelFolder", () => {
  it("roots at the picked folder and strips its name", () => {
    expect(modelFolder(at("tiny-lm/config.json", "tiny-lm/onnx/model.onnx"))).toEqual({
      name: "tiny-lm",
      files: at("config.json", "onnx/model.onnx"),
      outside: 0,
    });
  });

  it("looks through a dropped parent folder to the shallowest config.json", () => {
    const folder = modelFolder(
      at("models/README.md", "models/vlm/config.json", "models/vlm/onnx/a.onnx", "models/vlm/x/config.json"),
    );
    expect(folder.name).toBe("vlm");
    expect(folder.files.map((f) => f.path)).toEqual(["config.json", "onnx/a.onnx", "x/config.json"]);
    expect(folder.outside).toBe(1);
  });

  it("keeps files picked one by one (no folder) at the root", () => {
    expect(modelFolder(at("config.json", "tokenizer.json"))).toMatchObject({ name: "model", outside: 0 });
  });

  it("without config.json, roots at the one top folder so problems name what is missing", () => {
    expect(modelFolder(at("mine/onnx/model.onnx", "mine/tokenizer.json"))).toMatchObject({
      name: "mine",
      files: at("onnx/model.onnx", "tokenizer.json"),
    });
  });
});

describe("folderProblems", () => {
  const llama = JSON.stringify({ model_type: "llama" });
  const llava = JSON.stringify({ model_type: "llava", image_token_index: 4 });

  it("finds nothing wrong with a whole folder", () => {
    expect(
      folderProblems(["config.json", "tokenizer.json", "tokenizer_config.json", "onnx/model.onnx"], llama),
    ).toEqual([]);
  });

  it("names each missing file, the image model's preprocessor included", () => {
    expect(folderProblems(["config.json", "tokenizer.json", "onnx/decoder_model_merged.onnx"], llava)).toEqual([
      "tokenizer_config.json is missing",
      "preprocessor_config.json is missing",
    ]);
    expect(folderProblems(["config.json", "tokenizer.json", "tokenizer_config.json"], llama)).toEqual([
      "no ONNX graph in onnx/ (expected e.g. onnx/model.onnx)",
    ]);
  });

  it("says so when the graphs sit at the top instead of in onnx/", () => {
    expect(folderProblems(["config.json", "tokenizer.json", "tokenizer_config.json", "model.onnx"], llama)).toEqual([
      "no ONNX graph in onnx/ (model.onnx is at the top of the folder: keep the onnx/ folder, e.g. drop the whole model folder)",
    ]);
  });

  it("names a missing or broken config.json", () => {
    expect(folderProblems(["tokenizer.json"], undefined)).toEqual([
      "config.json is missing: a model folder holds config.json, tokenizer.json, tokenizer_config.json and onnx/*.onnx (found tokenizer.json)",
    ]);
    expect(folderProblems(["config.json"], "{ nope")[0]).toMatch(/^config\.json is not valid JSON \(/);
    expect(folderProblems(["config.json"], "[1]")).toEqual(["config.json is not valid JSON (not a JSON object)"]);
    expect(folderProblems(["config.json"], "{}")[0]).toBe("config.json has no 'model_type' string");
  });
});

describe("inspectionProblems", () => {
  it("names the graphs a layout lacks and why the runtime cannot run it", () => {
    expect(
      inspectionProblems({
        missing: [{ role: "vision_encoder", tried: ["onnx/vision_encoder.onnx", "onnx/vision_encoder_fp16.onnx"] }],
        runtime: { runs: false, reason: "t5 is an encoder-decoder" },
      }),
    ).toEqual([
      "no vision encoder graph: looked for onnx/vision_encoder.onnx, onnx/vision_encoder_fp16.onnx",
      "t5 is an encoder-decoder",
    ]);
    expect(inspectionProblems({ missing: [], runtime: { runs: true } })).toEqual([]);
  });
});
