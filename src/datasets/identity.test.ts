import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { FailureCase } from "../core/index.ts";
import { canonicalJson } from "./canonical.ts";
import { parseJson } from "./json.ts";
import { sha256Hex, sha256Prefix, sha256PrefixOfTexts, unitHash } from "./hash.ts";
import { caseHash, caseVersionHash, datasetVersion, derivedId } from "./identity.ts";
import { importDataset } from "./import.ts";
import { holdout, select, stableSample } from "./select.ts";
import vectors from "./fixtures/vectors.json";

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url);
const images = {
  async read(ref: string) {
    try {
      return new Uint8Array(readFileSync(fixture(ref)));
    } catch {
      return undefined;
    }
  },
};

describe("shared vectors (the browser test checks the same file)", () => {
  it("canonical JSON matches the hand-written strings", () => {
    for (const { value, text } of vectors.canonical) expect(canonicalJson(value)).toBe(text);
    expect(canonicalJson({ drop: undefined, keep: [undefined] })).toBe('{"keep":[null]}');
  });
  it("sha256 matches node:crypto", () => {
    for (const { text, hex } of vectors.sha256) expect(sha256Hex(text)).toBe(hex);
  });
  it("caseHash matches", () => {
    for (const { row, hash } of vectors.caseHash) expect(caseHash(row)).toBe(hash);
  });
  it("the stable sample is the N smallest sha256(id)", () => {
    const cases = vectors.sample.ids.map((id) => ({ id }));
    expect(
      stableSample(cases, vectors.sample.n)
        .map((c) => c.id)
        .sort(),
    ).toEqual(vectors.sample.chosen);
  });
  it("holdout seals the same cases", () => {
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
  it("the hostile fixture imports to the same ids, images, problems and version", async () => {
    const result = await importDataset(readFileSync(fixture("dataset.jsonl")), { name: "dataset.jsonl", images });
    expect(result.cases.map((c) => c.id)).toEqual(vectors.file.ids);
    expect(result.cases.map((c) => c.input.image ?? null)).toEqual(vectors.file.images);
    expect(result.problems).toEqual(vectors.file.problems);
    expect(datasetVersion(result.cases)).toBe(vectors.file.version);
    expect(select(result.cases, { sample: 2, includeArchived: true }).map((c) => c.id)).toEqual(vectors.file.sample2);
  });
});

describe("sha256Hex", () => {
  it("matches node:crypto for any text (short, long, lone surrogates) and for bytes", () => {
    const reference = (text: string) => createHash("sha256").update(new TextEncoder().encode(text)).digest("hex");
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 3000 }), (text) => {
        expect(sha256Hex(text)).toBe(reference(text));
      }),
      { numRuns: 200 },
    );
    const long = "é☕".repeat(400_000);
    expect(sha256Hex(long)).toBe(reference(long));
    expect(sha256Hex("short again")).toBe(reference("short again"));
    const bytes = Uint8Array.of(0, 255, 128);
    expect(sha256Hex(bytes)).toBe(createHash("sha256").update(bytes).digest("hex"));
  });
  it("pads every length right: each length from 0 to 300 bytes (one, two or more blocks) and a few large ones", () => {
    const reference = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
    for (const length of [...Array.from({ length: 301 }, (_, i) => i), 100_003, (1 << 20) + 63]) {
      const bytes = new Uint8Array(length);
      for (let i = 0; i < length; i++) bytes[i] = (i * 31 + length) & 255;
      expect(sha256Hex(bytes), `${length} bytes`).toBe(reference(bytes));
    }
    // A view into a larger buffer hashes its own bytes only.
    const buffer = Uint8Array.from({ length: 200 }, (_, i) => i);
    expect(sha256Hex(buffer.subarray(10, 150))).toBe(reference(buffer.slice(10, 150)));
  });
  it("sha256Prefix and unitHash are cuts of the same digest", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.integer({ min: 0, max: 64 }), (text, chars) => {
        const hex = createHash("sha256").update(text).digest("hex");
        expect(sha256Prefix(text, chars)).toBe(hex.slice(0, chars));
        expect(unitHash(text)).toBe(parseInt(hex.slice(0, 12), 16) / 2 ** 48);
      }),
      { numRuns: 300 },
    );
    expect(() => sha256Prefix("abc", 65)).toThrow("sha256Prefix(): chars must be a whole number from 0 to 64, got 65");
  });
  it("sha256PrefixOfTexts hashes the texts one after another, as node:crypto updated with each", () => {
    const reference = (texts: readonly string[]) => {
      const hash = createHash("sha256");
      for (const text of texts) hash.update(new TextEncoder().encode(text));
      return hash.digest("hex");
    };
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: "binary", maxLength: 300 }), { maxLength: 40 }),
        fc.integer({ min: 0, max: 64 }),
        (texts, chars) => {
          expect(sha256PrefixOfTexts(texts, chars)).toBe(reference(texts).slice(0, chars));
        },
      ),
      { numRuns: 300 },
    );
    // Well-formed texts give the joined text's digest; across the 64 KiB buffer, and past it (it grows).
    const lines = Array.from({ length: 3000 }, (_, i) => `"case-${i}-é☕" ${"0123456789abcdef".repeat(4)}\n`);
    expect(sha256PrefixOfTexts(lines, 64)).toBe(sha256Hex(lines.join("")));
    const huge = ["x", "é".repeat(200_000), "y"];
    expect(sha256PrefixOfTexts(huge, 12)).toBe(sha256Prefix(huge.join(""), 12));
    expect(sha256PrefixOfTexts([], 64)).toBe(sha256Hex(""));
    expect(() => sha256PrefixOfTexts(["a"], 1.5)).toThrow("sha256PrefixOfTexts(): chars must be a whole number");
  });
});

describe("canonicalJson", () => {
  it("is the same text whatever the key order, and parses back to the value", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(canonicalJson(JSON.parse(text))).toBe(text);
        expect(text).not.toMatch(/\n/);
        const shuffled = JSON.parse(JSON.stringify(value), function (_key, v) {
          if (v && typeof v === "object" && !Array.isArray(v))
            return Object.fromEntries(Object.entries(v as Record<string, unknown>).reverse());
          return v;
        });
        expect(canonicalJson(shuffled)).toBe(text);
      }),
    );
  });
  it("writes the non-finite numbers of eval logs as Python does, and parseJson reads them back", () => {
    const text = canonicalJson({ b: [1, NaN], a: -Infinity, c: Infinity });
    expect(text).toBe('{"a":-Infinity,"b":[1,NaN],"c":Infinity}');
    expect(parseJson(text)).toEqual({ a: -Infinity, b: [1, NaN], c: Infinity });
  });
  it("refuses what JSON cannot hold, naming where", () => {
    expect(() => canonicalJson({ f: () => 1 })).toThrow(/function at \$\.f/);
    expect(() => canonicalJson(new Float32Array(2))).toThrow(/typed array/);
  });
});

describe("identity", () => {
  const make = (id: string, prompt: string, extra: Partial<FailureCase> = {}): FailureCase => ({
    id,
    input: { prompt },
    tags: [],
    status: "active",
    meta: {},
    ...extra,
  });
  it("caseHash is 12 hex of sha256 over canonical {input, expected}; ids and meta do not matter", () => {
    const a = make("a", "2+2?", { expected: "4", meta: { x: 1 } });
    const b = make("b", "2+2?", { expected: "4" });
    expect(caseHash(a)).toMatch(/^[0-9a-f]{12}$/);
    expect(caseHash(a)).toBe(caseHash(b));
    expect(caseHash(a)).toBe(
      createHash("sha256").update('{"expected":"4","input":{"prompt":"2+2?"}}').digest("hex").slice(0, 12),
    );
    expect(caseHash(make("a", "2+2?", { expected: "5" }))).not.toBe(caseHash(a));
  });
  it("datasetVersion ignores order, changes with any case edit or archive, and refuses duplicate ids", () => {
    const cases = [make("a", "x"), make("b", "y", { tags: ["t"] }), make("c", "z")];
    const v = datasetVersion(cases);
    expect(v).toMatch(/^[0-9a-f]{12}$/);
    expect(datasetVersion([...cases].reverse())).toBe(v);
    expect(datasetVersion([cases[0]!, cases[1]!, { ...cases[2]!, status: "archived" }])).not.toBe(v);
    expect(datasetVersion([cases[0]!, { ...cases[1]!, tags: [] }, cases[2]!])).not.toBe(v);
    expect(datasetVersion([cases[0]!, cases[1]!, { ...cases[2]!, meta: { note: 1 } }])).toBe(v);
    expect(() => datasetVersion([cases[0]!, cases[0]!])).toThrow(/'a' appears twice/);
  });
  it("caseHash and caseVersionHash hash the canonical JSON, whatever the case's shape", () => {
    const text = fc.string({ unit: "binary", maxLength: 40 });
    const input = fc.oneof(
      text,
      fc.record({ prompt: text }),
      fc.record({ prompt: text, image: text }),
      fc.record({ prompt: text, image: fc.constant(undefined) }),
      fc.record({ prompt: text, other: fc.jsonValue() }),
      fc.jsonValue(),
    );
    const label = fc.option(text, { nil: undefined });
    fc.assert(
      fc.property(
        fc.record({
          id: text,
          input,
          expected: fc.option(fc.oneof(text, fc.jsonValue()), { nil: undefined }),
          tags: fc.array(text, { maxLength: 4 }),
          split: label,
          cluster: label,
          status: fc.option(fc.constantFrom("active" as const, "archived" as const), { nil: undefined }),
        }),
        (row) => {
          const normal = typeof row.input === "string" ? { prompt: row.input } : row.input;
          const hash = caseHash(row);
          expect(hash).toBe(sha256Hex(canonicalJson({ input: normal, expected: row.expected })).slice(0, 12));
          const c = { ...row, meta: {} } as unknown as FailureCase;
          const { id, tags, split, cluster, status } = row;
          expect(caseVersionHash(c, hash)).toBe(
            sha256Hex(canonicalJson({ id, caseHash: hash, tags, split, cluster, status })),
          );
        },
      ),
      { numRuns: 500 },
    );
  });
  it("a derived id depends on the input only, and both input spellings agree", () => {
    expect(derivedId("hello")).toBe(derivedId({ prompt: "hello" }));
    expect(derivedId("hello")).not.toBe(derivedId("hello!"));
  });
});
