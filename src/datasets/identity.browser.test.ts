import { describe, expect, it } from "vitest";
import { canonicalJson } from "./canonical.ts";
import { sha256Hex } from "./hash.ts";
import { caseHash, datasetVersion } from "./identity.ts";
import { importDataset } from "./import.ts";
import { holdout, select, stableSample } from "./select.ts";
import vectors from "./fixtures/vectors.json";
import datasetUrl from "./fixtures/dataset.jsonl?url";

// The same vectors the Node test checks: hashes, selections and samples must be byte-identical in the page.

/** Reads an image next to the dataset as the page would: a missing file is not found, never an HTML fallback. */
const images = {
  async read(ref: string) {
    const response = await fetch(new URL(ref, new URL(datasetUrl, location.href)));
    if (!response.ok || (response.headers.get("content-type") ?? "").includes("text/html")) return undefined;
    return new Uint8Array(await response.arrayBuffer());
  },
};

describe("identity in the browser matches Node (shared vectors)", () => {
  it("canonical JSON, sha256 and caseHash", () => {
    for (const { value, text } of vectors.canonical) expect(canonicalJson(value)).toBe(text);
    for (const { text, hex } of vectors.sha256) expect(sha256Hex(text)).toBe(hex);
    for (const { row, hash } of vectors.caseHash) expect(caseHash(row)).toBe(hash);
  });

  it("stable samples and holdouts", () => {
    const ids = vectors.sample.ids.map((id) => ({ id }));
    expect(
      stableSample(ids, vectors.sample.n)
        .map((c) => c.id)
        .sort(),
    ).toEqual(vectors.sample.chosen);
    const big = vectors.sample.ids.map((id, i) => ({
      id,
      input: { prompt: id },
      tags: [],
      status: "active" as const,
      meta: {},
      cluster: `g${i % 37}`,
    }));
    expect(holdout(big, 0.3, { by: "cluster" }).sealed.map((c) => c.id)).toEqual(vectors.holdout.byCluster);
    expect(holdout(big, 0.3, { by: "id" }).sealed.map((c) => c.id)).toEqual(vectors.holdout.byId);
  });

  it("the hostile fixture, streamed from the server as a file would be, gives the same cases, problems and version", async () => {
    const response = await fetch(datasetUrl);
    const file = new File([await response.arrayBuffer()], "dataset.jsonl");
    const result = await importDataset(file.stream(), { name: file.name, images });
    expect(result.cases.map((c) => c.id)).toEqual(vectors.file.ids);
    expect(result.cases.map((c) => c.input.image ?? null)).toEqual(vectors.file.images);
    // JSON.parse's own wording may differ between engine versions: compare lines and our part of the reason.
    const ours = (reason: string) => reason.replace(/^not JSON \(.*\); /, "not JSON; ");
    expect(result.problems.map((p) => [p.line, ours(p.reason), p.id])).toEqual(
      vectors.file.problems.map((p) => [p.line, ours(p.reason), (p as { id?: string }).id]),
    );
    expect(datasetVersion(result.cases)).toBe(vectors.file.version);
    expect(select(result.cases, { sample: 2, includeArchived: true }).map((c) => c.id)).toEqual(vectors.file.sample2);
  });
});
