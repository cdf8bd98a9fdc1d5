import { deleteDB, openDB } from "idb";
import { afterEach, describe, expect, it } from "vitest";
import type { LineageRecord } from "./record.ts";
import { LineageDb } from "./lineage-db.browser.ts";
import { lineageChain } from "./chain.ts";

const NAME = "evalrx-lineage-test";

function record(id: string, parent: string, promotedAt: string): LineageRecord {
  return {
    id,
    parent,
    tier: "L1",
    repair: { signature: "rewrite:context", name: "prompt rewrite 'context'", description: "restates the image" },
    weights: "tiny-vlm",
    wrappers: ["rewrite:context"],
    evidence: {
      runId: "inv-1",
      n: 240,
      baselineFailures: 40,
      candidateFailures: 25,
      fixed: 18,
      broken: 3,
      delta: -15 / 240,
      p: 0.0007,
      e: 40,
      gamma: 0.025,
      test: "mcnemar",
      unit: "case",
      eMethod: "e = 1/γ·1{p ≤ γ}",
      control: { fixed: 12, broken: 2, p: 0.006, e: 40, beaten: true },
      cases: null,
    },
    dataset: { source: "pope.jsonl", fingerprint: "0c62da0605d0", n: 600 },
    promotedAt,
  };
}

afterEach(async () => {
  await deleteDB(NAME);
});

describe("LineageDb (real IndexedDB)", () => {
  it("keeps each promoted model once, survives a reopen, and reads in promotion order", async () => {
    const db = await LineageDb.open(NAME);
    await db.add(record("tiny-vlm+b", "tiny-vlm+a", "2026-12-01T12:00:00.000Z"));
    await db.add(record("tiny-vlm+a", "tiny-vlm", "2026-11-01T00:00:00.000Z"));
    await expect(db.add(record("tiny-vlm+a", "tiny-vlm", "2026-12-02T00:00:00.000Z"))).rejects.toThrow(
      /'tiny-vlm\+a' exists already/,
    );
    db.close();
    const again = await LineageDb.open(NAME);
    const { records, problems } = await again.read();
    expect(problems).toEqual([]);
    expect(records.map((r) => r.id)).toEqual(["tiny-vlm+a", "tiny-vlm+b"]);
    expect(lineageChain(records, "tiny-vlm+b").map((s) => s.parent)).toEqual(["tiny-vlm", "tiny-vlm+a"]);
    again.close();
  });

  it("refuses a record that is not one before writing, and names a bad stored record without losing the others", async () => {
    const db = await LineageDb.open(NAME);
    await expect(
      db.add({ ...record("x", "tiny-vlm", "2026-12-01T00:00:00.000Z"), tier: "L9" as never }),
    ).rejects.toThrow(/promoted model 'x': not a promoted model: field 'tier'/);
    await db.add(record("ok", "tiny-vlm", "2026-12-01T00:00:00.000Z"));
    db.close();
    const raw = await openDB(NAME, 1);
    await raw.put("models", { id: "bad", promotedAt: "2026-12-03T00:00:00.000Z" });
    raw.close();
    const again = await LineageDb.open(NAME);
    const { records, problems } = await again.read();
    expect(records.map((r) => r.id)).toEqual(["ok"]);
    expect(problems[0]).toMatch(/evalrx-lineage-test\/models\/bad: not a promoted model: field 'parent'/);
    again.close();
  });
});
