import { describe, expect, it } from "vitest";
import type { EngineCheck } from "../../models/backend-choice.ts";
import { getSpec } from "../../models/specs/index.ts";
import type { ModelStatus } from "../../../workers/model.worker.ts";
import { readEngineChecks, readSummaries, rememberEngineCheck, specView, summarize } from "./model-summary.ts";

const check = (key: string, measuredAt: string): EngineCheck => ({
  key,
  device: "wasm",
  reason: "WASM is faster here",
  wasmMs: 1,
  webgpuMs: 40,
  maxAbsDelta: 1e-5,
  tolerance: 2e-3,
  logitScale: 1,
  webgpuTrusted: true,
  reference: "tiny-lm",
  measuredAt,
});

describe("engine checks in localStorage", () => {
  it("keeps one check per key, newest first, and drops entries that are not checks", () => {
    let raw: string | null = null;
    raw = rememberEngineCheck(raw, check("a", "2026-12-01T10:00:00Z"));
    raw = rememberEngineCheck(raw, check("b", "2026-12-01T11:00:00Z"));
    raw = rememberEngineCheck(raw, check("a", "2026-12-01T12:00:00Z"));
    expect(readEngineChecks(raw).map((c) => [c.key, c.measuredAt])).toEqual([
      ["a", "2026-12-01T12:00:00Z"],
      ["b", "2026-12-01T11:00:00Z"],
    ]);
    expect(readEngineChecks('{"x": {"key": "x", "device": "cuda"}, "y": 3}')).toEqual([]);
    expect(readEngineChecks("not json")).toEqual([]);
  });

  it("remembers at most six", () => {
    let raw: string | null = null;
    for (let i = 0; i < 9; i++) raw = rememberEngineCheck(raw, check(`k${i}`, `2026-12-01T1${i}:00:00Z`));
    expect(readEngineChecks(raw).map((c) => c.key)).toEqual(["k8", "k7", "k6", "k5", "k4", "k3"]);
  });
});

describe("model summaries", () => {
  const spec = getSpec("tiny-lm")!;
  const status: ModelStatus = {
    key: "tiny-lm",
    spec,
    capabilities: ["generate", "logits"],
    attention: { kind: "exported" },
    choice: { device: "wasm", reason: "WASM was asked for" },
    backend: "ort",
    filesRead: ["config.json", "onnx/model.onnx"],
    fileHashes: {},
    fileBytes: { "config.json": 800, "onnx/model.onnx": 380_000 },
  };

  it("sums the bytes read and keeps the spec as plain data", () => {
    const summary = summarize("bundled:tiny-lm", status, new Date("2026-12-01T00:00:00Z"));
    expect(summary).toMatchObject({ name: "bundled:tiny-lm", bytes: 380_800, loadedAt: "2026-12-01T00:00:00.000Z" });
    expect(summary.spec).toEqual(specView(spec));
    expect(summary.spec.modalities).toEqual(["text"]);
    expect(JSON.parse(JSON.stringify(summary))).toEqual(summary);
  });

  it("reads back what it wrote and drops what is not a summary", () => {
    const summary = summarize("bundled:tiny-lm", status);
    const raw = JSON.stringify({ "bundled:tiny-lm": summary, "hub:a/b": { name: "other" }, bad: 1 });
    expect(readSummaries(raw)).toEqual({ "bundled:tiny-lm": summary });
    expect(readSummaries(null)).toEqual({});
  });
});
