import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { PLANTED, plantedDimReport } from "../../agent/lineage/planted-report.node.ts";
import { parseReport } from "../../report/schema.ts";
import { main } from "../cli.ts";

/** Runs `evalrx …` in this process (output captured). */
async function run(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const log = vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void out.push(a.join(" ")));
  const error = vi.spyOn(console, "error").mockImplementation((...a: unknown[]) => void err.push(a.join(" ")));
  try {
    return { status: await main(args), stdout: out.join("\n"), stderr: err.join("\n") };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

const dir = mkdtempSync(join(tmpdir(), "evalrx-promote-"));
const planted = PLANTED;
const lineage = join(dir, "lineage.jsonl");

beforeAll(() => plantedDimReport(join(dir, "inv-1")), 60_000);

describe("evalrx model promote / lineage, and investigate on the promoted model", () => {
  it("refuses a repair M5 did not validate, naming its numbers", async () => {
    const r = await run([
      "model",
      "promote",
      "--report",
      join(dir, "inv-1"),
      "--repair",
      "rewrite:context",
      "--lineage",
      lineage,
    ]);
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(
      /repair 'rewrite:context' \(L1 prompt rewrite 'context'\) was not validated — it fixed \d+ and broke \d+ of 60 cases/,
    );
    const missing = await run([
      "model",
      "promote",
      "--report",
      join(dir, "nowhere"),
      "--repair",
      "x",
      "--lineage",
      lineage,
    ]);
    expect(missing.stderr).toMatch(
      /--report .*nowhere: .*nowhere does not exist; give an investigation's --out folder \(it holds report\.json\)/,
    );
  });

  it("promotes the validated L3b repair, and the next investigation runs on it with its lineage in the report", async () => {
    const promoted = await run([
      "model",
      "promote",
      "--report",
      join(dir, "inv-1"),
      "--repair",
      "attention-bias:image:2",
      "--lineage",
      lineage,
    ]);
    expect(promoted.stderr).toBe("");
    expect(promoted.status).toBe(0);
    expect(promoted.stdout).toMatch(/promoted planted-vlm\+attention-bias-image-2/);
    expect(promoted.stdout).toMatch(
      /L3b attention \+2 on image tokens: failures -\d+\.\dpp \(fixed \d+, broke 0 of 60; p = /,
    );
    expect(promoted.stdout).toMatch(/next: evalrx investigate --model planted-vlm\+attention-bias-image-2/);
    const again = await run([
      "model",
      "promote",
      "--report",
      join(dir, "inv-1"),
      "--repair",
      "attention-bias:image:2",
      "--lineage",
      lineage,
    ]);
    expect(again.stderr).toMatch(/'planted-vlm\+attention-bias-image-2' exists already/);

    const out = join(dir, "inv-2");
    const inv = await run([
      "investigate",
      "--model",
      "planted-vlm+attention-bias-image-2",
      "--lineage",
      lineage,
      "--sample",
      "30",
      "--max-tier",
      "none",
      "--out",
      out,
    ]);
    expect(inv.stderr).toBe("");
    expect(inv.status).toBe(0);
    const report = parseReport(readFileSync(join(out, "report.json"), "utf8"));
    expect(report.provenance.model).toMatchObject({
      key: "planted-vlm+attention-bias-image-2",
      weights: expect.stringMatching(/planted-vlm$/),
      lineage: [
        {
          id: "planted-vlm+attention-bias-image-2",
          tier: "L3b",
          signature: "attention-bias:image:2",
          broken: 0,
          runId: "investigate-planted-dim",
          dataset: "dimscenes010",
        },
      ],
    });
    // The report's provenance says it in words, in the page and the HTML export alike.
    expect(readFileSync(join(out, "report.html"), "utf8")).toMatch(
      /Lineage.*→ planted-vlm\+attention-bias-image-2 \(L3b attention \+2 on image tokens: failures -\d+\.\d pp, fixed \d+ \/ broke 0 of 60/s,
    );
    const chain = await run(["model", "lineage", "--lineage", lineage, "--json"]);
    expect(JSON.parse(chain.stdout)).toMatchObject([
      { id: "planted-vlm+attention-bias-image-2", lineage: [{ parent: planted }] },
    ]);
  }, 60_000);
});
