import { describe, expect, it } from "vitest";
import { getSpec } from "../../../models/specs/index.ts";
import { capabilityWords, specRows } from "./card.ts";

describe("specRows", () => {
  it("lists the bundled VLM's sizes and image grid", () => {
    const rows = Object.fromEntries(specRows(getSpec("tiny-vlm")!).map((r) => [r.label, r.value]));
    expect(rows.family).toBe("llava");
    expect(rows.modalities).toBe("text, image");
    expect(rows["image grid"]).toBe("6 × 6 tokens (48 × 48 px)");
    expect(rows.context).toMatch(/ tokens$/);
  });

  it("shows KV heads only when they differ, and no grid for a text model", () => {
    const spec = { ...getSpec("tiny-lm")!, heads: 8, kvHeads: 2, modalities: ["text"] };
    const rows = specRows(spec);
    expect(rows.find((r) => r.label === "heads")?.value).toBe("8 (2 KV)");
    expect(rows.some((r) => r.label === "image grid")).toBe(false);
  });
});

describe("capabilityWords", () => {
  it("splits the catalogue into what is given and what is not", () => {
    expect(capabilityWords(["generate", "image"])).toEqual({
      gives: ["answers", "images"],
      lacks: ["logits", "attention", "hidden states", "attention edits"],
    });
  });
});
