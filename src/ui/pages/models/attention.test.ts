import { describe, expect, it } from "vitest";
import { attentionLines } from "./attention.ts";

describe("attentionLines", () => {
  it("says what the runtime's plain status says", () => {
    expect(attentionLines({ kind: "exported" })).toEqual({
      state: "found",
      headline: "exported by the model as graph outputs",
      details: [],
    });
    expect(attentionLines({ kind: "tapped", tensors: ["/l0/Softmax_output_0", "/l1/Softmax_output_0"] })).toEqual({
      state: "found",
      headline: "found in the graph and added as outputs (tapped: 2 attention tensors)",
      details: ["tensors: /l0/Softmax_output_0, /l1/Softmax_output_0"],
    });
    expect(attentionLines({ kind: "unreadable", reason: "the graph fuses attention into MultiHeadAttention" })).toEqual(
      {
        state: "not readable",
        headline: "the graph fuses attention into MultiHeadAttention",
        details: [],
      },
    );
  });

  it("reads the richer status: where, fused ops, why not and what to do", () => {
    const lines = attentionLines({
      file: "onnx/model.onnx",
      source: "unreadable",
      found: 0,
      layers: 2,
      expected: 2,
      readable: false,
      writable: false,
      sites: [],
      fused: [
        {
          op: "GroupQueryAttention",
          domain: "com.microsoft",
          node: "gqa0",
          where: "main graph",
          decomposed: false,
          reason: "no decomposer for rotary interleaved",
        },
      ],
      inlined: [],
      unreachable: [],
      reason: "fused GroupQueryAttention",
      advice: "re-export without fusion",
    });
    expect(lines.state).toBe("not readable");
    expect(lines.headline).toBe("fused GroupQueryAttention");
    expect(lines.details).toEqual([
      "graph: onnx/model.onnx",
      "fused GroupQueryAttention 'gqa0' in main graph: not decomposed — no decomposer for rotary interleaved",
      "to fix: re-export without fusion",
    ]);
    const found = attentionLines({
      source: "tapped",
      found: 2,
      expected: 2,
      readable: true,
      sites: [
        {
          layer: 0,
          output: "attentions.0",
          places: [{ where: "If 'optimum::if' then_branch" }, { where: "If 'optimum::if' else_branch" }],
        },
      ],
      fused: [],
    });
    expect(found.headline).toBe("found in the graph and added as outputs (tapped: 2 of 2 attention tensors)");
    expect(found.details).toEqual(["found in: If 'optimum::if' then_branch; If 'optimum::if' else_branch"]);
  });

  it("keeps fields it does not know as details, and says 'unknown' before any load", () => {
    expect(attentionLines({ kind: "exported", note: "new field" }).details).toEqual(["note: new field"]);
    expect(attentionLines(undefined)).toEqual({
      state: "unknown",
      headline: "read from the graph when loaded",
      details: [],
    });
  });
});
