import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { EventLog } from "../../agent/events.ts";
import { climb } from "../../agent/repair.ts";
import { buildReport } from "../../agent/report.ts";
import { importDataset } from "../../datasets/index.ts";
import { yesNo } from "../../evals/index.ts";
import { loadModel, REPO_ROOT } from "../../models/load.node.ts";
import { parseReport } from "../../report/schema.ts";
import { FileStore } from "../../store/files.node.ts";
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
const planted = join(REPO_ROOT, "models/planted-vlm");
const lineage = join(dir, "lineage.jsonl");

/**
 * A real M5 on planted-vlm (onnxruntime-node, the file store, the paired tests) over the cases of ten of its
 * dim scenes, where the forge planted the mechanism that +2 on the image tokens' attention undoes; the baseline
 * is the forge's own answers (which onnxruntime reproduces, see planted.test.ts). The yes-bias control is left
 * out here (no baseline outputs are given to the ladder), so the paired test alone decides; `investigate`
 * always adds the control.
 */
beforeAll(async () => {
  const ref = JSON.parse(readFileSync(join(planted, "eval-reference.json"), "utf8")) as {
    dim_scenes: string[];
    answers: Record<string, string>;
  };
  const dim = new Set(ref.dim_scenes.slice(0, 10));
  const all = (
    await importDataset(new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo/pope.jsonl"))), { name: "pope.jsonl" })
  ).cases;
  const cases = all.filter((c) => dim.has(String(c.cluster)));
  const model = await loadModel(planted, { memo: true });
  const runId = "investigate-planted-dim";
  const log = new EventLog({ runId });
  log.append("setup", "run.started", {
    kind: "investigate",
    question: "What predicts the hallucinations?",
    seed: 1,
    alpha: 0.05,
    maxTier: "L3b",
    model: { key: model.spec.key, source: planted },
  });
  log.append("setup", "data.loaded", {
    source: "pope.jsonl",
    fingerprint: "dimscenes010",
    n: cases.length,
    labelColumn: null,
    labelDistribution: { fail: 0, pass: 0 },
  });
  const store = await FileStore.open(join(dir, "store"));
  const images = async (ref: string) => new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo", ref)));
  const baseline = new Map(cases.map((c) => [c.id, ref.answers[c.id]!.trim().startsWith(String(c.expected))]));
  await climb({ store, model, dataset: { id: "pope" }, evaluators: [yesNo()], images, runId }, cases, baseline, log, {
    maxTier: "L3b",
    alpha: 0.05,
    imageBiasSign: 1,
  });
  log.append("report", "run.finished", { cases: cases.length, failures: 0, verdicts: [] });
  await model.dispose();
  mkdirSync(join(dir, "inv-1"));
  writeFileSync(join(dir, "inv-1/report.json"), JSON.stringify(buildReport(log.events)));
}, 60_000);

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
