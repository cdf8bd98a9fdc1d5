import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { loadModel, REPO_ROOT } from "../../models/load.node.ts";
import type { RunEvent } from "../events.ts";
import { loadPromoted } from "../lineage/wrapper.ts";
import { promote } from "../lineage/promote.ts";
import { buildReport } from "../report.ts";
import { main } from "../../node/cli.ts";
import { loadNamedModel } from "../../node/commands/model.ts";
import { invertedL4Report } from "./l4-report.node.ts";

const dir = mkdtempSync(join(tmpdir(), "evalrx-l4-rung-"));
let events: readonly RunEvent[];
beforeAll(async () => {
  events = await invertedL4Report(dir);
}, 120_000);

describe("L4 as M5's last rung (tiny-vlm, a task inverting the demo's answers)", () => {
  it("is planned in the budget, trained only after L1–L3b failed, and validated by the same paired test, control and no-free-lunch check", () => {
    const tested = events.filter((e) => e.type === "repair.tested").map((e) => e.payload);
    expect(tested.map((t) => t["tier"])).toEqual(["L1", "L1", "L2", "L3b", "L3b", "L4"]);
    expect(tested.slice(0, -1).some((t) => t["validated"])).toBe(false);
    const l4 = tested.at(-1)!;
    const finished = events.find((e) => e.type === "repairs.finished")!.payload;
    expect(finished["budget"]).toMatchObject({ tests: 6, gamma: 0.05 / 6 });
    expect(l4).toMatchObject({ signature: "lora:lm_head:r4:a8:steps200:seed1", validated: true });
    // It flips every answer: the cases the base model got wrong on the demo's own labels break (5 of 48).
    expect(l4["fixed"] as number).toBeGreaterThan(30);
    expect(l4["broken"] as number).toBeLessThan(8);
    expect(l4["p"] as number).toBeLessThan(0.05 / 6);
    expect(l4["control"]).toMatchObject({ beaten: true });
    const guard = l4["noFreeLunch"] as { holds: boolean; slices: { slice: string }[] };
    expect(guard.holds).toBe(true);
    expect(guard.slices.map((s) => s.slice)).toEqual(["present objects", "random split"]);
    const training = l4["training"] as {
      pool: { cases: number };
      finalLoss: number;
      initialLoss: number;
      weights: string;
    };
    expect(training.pool.cases).toBe(60);
    expect(training.finalLoss).toBeLessThan(training.initialLoss);
    expect(existsSync(join(training.weights, "onnx/decoder_model_merged.onnx"))).toBe(true);
    expect(finished["fixedBy"]).toBe("L4 LoRA head adapter (rank 4)");
  });

  it("is promoted to a model of its own that runs the merged weights (no wrapper), and answers as validated", async () => {
    const report = buildReport(events);
    const l4 = events.find((e) => e.type === "repair.tested" && e.payload["tier"] === "L4")!.payload;
    const weights = (l4["training"] as { weights: string }).weights;
    // The report keeps what L4 trained and what it had to keep (the schema dropped both before).
    const inReport = report.repairs!.candidates.find((c) => c.tier === "L4")!;
    expect(inReport.noFreeLunch).toMatchObject({ holds: true });
    expect(inReport.training).toMatchObject({ weights });
    expect(() => promote(report, "lora:lm_head:r4:a8:steps200:seed1")).toThrow(/give the merged model's folder/);
    const record = promote(report, "lora:lm_head:r4:a8:steps200:seed1", { weights });
    expect(record).toMatchObject({
      id: "tiny-vlm+lora-lm_head-r4-a8-steps200-seed1",
      tier: "L4",
      weights,
      wrappers: [],
    });
    const model = await loadPromoted(record, (w) => loadModel(w));
    try {
      const line = JSON.parse(readFileSync(join(REPO_ROOT, "public/demo/pope.jsonl"), "utf8").split("\n")[0]!) as {
        input: { prompt: string; image: string };
        expected: string;
      };
      const image = new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo", line.input.image)));
      // The inverted task's answer: the opposite of the demo's expected one.
      expect(await model.generate({ prompt: line.input.prompt, image })).toMatch(
        line.expected === "yes" ? /^no/ : /^yes/,
      );
      expect(model.spec.key).toBe(record.id);
    } finally {
      await model.dispose();
    }
  });

  it("'evalrx model promote' finds the merged folder in the run's events, and the promoted model loads by its id", async () => {
    const lineage = join(dir, "lineage.jsonl");
    const out: string[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void out.push(a.join(" ")));
    let status: number;
    try {
      status = await main([
        "model",
        "promote",
        "--report",
        dir,
        "--repair",
        "lora:lm_head:r4:a8:steps200:seed1",
        "--name",
        "tiny-vlm-inverted",
        "--lineage",
        lineage,
      ]);
    } finally {
      log.mockRestore();
    }
    expect(status).toBe(0);
    expect(out.join("\n")).toMatch(/promoted tiny-vlm-inverted/);
    expect(out.join("\n")).toMatch(/tiny-vlm → tiny-vlm-inverted {2}L4 LoRA head adapter \(rank 4\)/);
    const { model, record, lineage: chain } = await loadNamedModel("tiny-vlm-inverted", { lineage });
    try {
      expect(record!.weights).toBe(join(dir, "l4", "tiny-vlm+lora-lm_head-r4-a8-steps200-seed1"));
      expect(chain!.map((step) => [step.parent, step.id, step.tier])).toEqual([
        ["tiny-vlm", "tiny-vlm-inverted", "L4"],
      ]);
      expect(model.spec.key).toBe("tiny-vlm-inverted");
    } finally {
      await model.dispose();
    }
  });
});
