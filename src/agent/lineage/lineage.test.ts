import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rewrite } from "../../analyzers/index.ts";
import type { FailureCase, Model, ModelInput } from "../../core/index.ts";
import { yesNo } from "../../evals/index.ts";
import { loadModel, REPO_ROOT } from "../../models/load.node.ts";
import type { OrtModel } from "../../models/ort-model.ts";
import type { Report } from "../../report/schema.ts";
import { FileStore } from "../../store/files.node.ts";
import { EventLog } from "../events.ts";
import { climb } from "../repair.ts";
import { buildReport } from "../report.ts";
import { lineageChain, lineageLeaves } from "./chain.ts";
import { LineageFile } from "./lineage-file.node.ts";
import { promotable, promote, PromotionRefused } from "./promote.ts";
import { loadPromoted, wrapRepair } from "./wrapper.ts";

/** A deterministic text model for M5's bookkeeping: answers "yes" only when the prompt asks twice (the 'restate' rewrite). */
function ruleModel(key: string): Model {
  const spec = {
    key,
    family: "test",
    modalities: new Set(["text" as const]),
    source: key,
    files: [],
    layers: 1,
    heads: 1,
    kvHeads: 1,
    hiddenSize: 8,
    vocabSize: 10,
    contextLength: 64,
    capabilities: new Set(["generate" as const]),
  };
  return {
    spec,
    capabilities: spec.capabilities,
    generate: async (input: ModelInput) => (/\?.*\?/.test(input.prompt) ? "yes" : "no"),
    forward: async () => {
      throw new Error("not used");
    },
    dispose: async () => {},
  };
}

const cases: FailureCase[] = Array.from({ length: 12 }, (_, i) => ({
  id: `c${i}`,
  input: { prompt: `is there a red circle ? ${i}` },
  expected: "yes",
  tags: [],
  status: "active",
  meta: {},
}));

/** A real M5 climb (store, eval runs, paired tests) folded into a report, as `investigate` does. */
async function m5Report(model: Model, runId: string, finish = true): Promise<Report> {
  const log = new EventLog({ runId, now: () => Date.parse("2026-12-01T12:00:00Z") });
  log.append("setup", "run.started", {
    kind: "investigate",
    question: "q",
    seed: 1,
    alpha: 0.05,
    maxTier: "L3b",
    model: { key: model.spec.key, source: model.spec.source },
  });
  log.append("setup", "data.loaded", {
    source: "cases.jsonl",
    fingerprint: "0123456789ab",
    n: cases.length,
    labelColumn: null,
    labelDistribution: { fail: 12, pass: 0 },
  });
  const store = await FileStore.open(mkdtempSync(join(tmpdir(), "evalrx-lineage-")));
  const ctx = {
    store,
    model,
    dataset: { id: "d" },
    evaluators: [yesNo()],
    images: async () => new Uint8Array(),
    runId,
  };
  await climb(ctx, cases, new Map(cases.map((c) => [c.id, false])), log, { maxTier: "L2", alpha: 0.05 });
  if (finish) log.append("report", "run.finished", { cases: 12, failures: 12, verdicts: [] });
  return buildReport(log.events);
}

describe("promotion", () => {
  it("a validated repair becomes a model with its parent, the repair, M5's evidence and the dataset version", async () => {
    const report = await m5Report(ruleModel("rule"), "inv-1");
    expect(promotable(report).map((r) => r.signature)).toEqual(["rewrite:restate"]);
    const record = promote(report, "rewrite:restate", { now: () => new Date("2026-12-01T13:00:00Z") });
    expect(record).toMatchObject({
      id: "rule+rewrite-restate",
      parent: "rule",
      tier: "L1",
      weights: "rule",
      wrappers: ["rewrite:restate"],
      repair: { signature: "rewrite:restate", name: "prompt rewrite 'restate'" },
      evidence: { runId: "inv-1", n: 12, fixed: 12, broken: 0, baselineFailures: 12, candidateFailures: 0, delta: -1 },
      dataset: { source: "cases.jsonl", fingerprint: "0123456789ab", n: 12 },
      promotedAt: "2026-12-01T13:00:00.000Z",
    });
    expect(record.evidence.p).toBeCloseTo(2 ** -12, 12);
    expect(record.evidence.e).toBeGreaterThan(1);
  });

  it("refuses a repair that did not validate, one the report does not hold, and an unfinished report", async () => {
    const report = await m5Report(ruleModel("rule"), "inv-2");
    // 'restate' validated on L1, so the ladder stopped; a report edited to say it did not is refused.
    const failed: Report = {
      ...report,
      repairs: {
        ...report.repairs!,
        candidates: report.repairs!.candidates.map((c) => ({ ...c, validated: false, fixed: 1, broken: 3 })),
      },
    };
    expect(() => promote(failed, "rewrite:restate")).toThrow(PromotionRefused);
    expect(() => promote(failed, "rewrite:restate")).toThrow(/was not validated — it fixed 1 and broke 3 of 12 cases/);
    expect(() => promote(report, "self-consistency:3")).toThrow(
      /has no repair 'self-consistency:3'; it tried rewrite:restate \(L1 prompt rewrite 'restate': validated\)/,
    );
    const unfinished = await m5Report(ruleModel("rule"), "inv-3", false);
    expect(() => promote(unfinished, "rewrite:restate")).toThrow(/is incomplete/);
    expect(promotable(unfinished)).toEqual([]);
    expect(() => promote(report, "rewrite:restate", { weights: "/tmp/x" })).toThrow(/keeps the parent's weights/);
  });

  it("a promoted model is the next subject: its own M5 promotes it again, and the chain keeps every step", async () => {
    const file = new LineageFile(join(mkdtempSync(join(tmpdir(), "evalrx-lineage-")), "lineage.jsonl"));
    const first = promote(await m5Report(ruleModel("rule"), "inv-4"), "rewrite:restate");
    await file.add(first);
    await expect(file.add(first)).rejects.toThrow(/'rule\+rewrite-restate' exists already/);
    // The promoted model answers with the rewrite applied; M5 on it runs the ladder again on the wrapped model.
    const promoted = await loadPromoted(first, async (w) => ruleModel(w));
    expect(promoted.spec.key).toBe("rule+rewrite-restate");
    expect(await promoted.generate({ prompt: "is there a red circle ?" })).toBe("yes");
    const second = promote(await m5Report(promoted, "inv-5"), "rewrite:restate", { parent: first, id: "rule-v3" });
    expect(second).toMatchObject({
      parent: "rule+rewrite-restate",
      weights: "rule",
      wrappers: ["rewrite:restate", "rewrite:restate"],
    });
    await file.add(second);
    const { records, problems } = await file.read();
    expect(problems).toEqual([]);
    expect(lineageChain(records, "rule-v3").map((s) => [s.parent, s.id, s.tier])).toEqual([
      ["rule", "rule+rewrite-restate", "L1"],
      ["rule+rewrite-restate", "rule-v3", "L1"],
    ]);
    expect(lineageLeaves(records).map((r) => r.id)).toEqual(["rule-v3"]);
    // A promotion names the model its report ran: a parent record of another model is refused.
    const other = await m5Report(ruleModel("other"), "inv-6");
    expect(() => promote(other, "rewrite:restate", { parent: first })).toThrow(
      /ran model 'other', not the promoted model/,
    );
  });

  it("a bad line in the lineage file is named with its line number; the records around it are kept", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalrx-lineage-"));
    const path = join(dir, "lineage.jsonl");
    const record = promote(await m5Report(ruleModel("rule"), "inv-7"), "rewrite:restate");
    writeFileSync(path, JSON.stringify(record) + "\n" + JSON.stringify({ ...record, id: "x", tier: "L9" }) + "\n{torn");
    const { records, problems } = await new LineageFile(path).read();
    expect(records.map((r) => r.id)).toEqual(["rule+rewrite-restate"]);
    expect(problems[0]).toMatch(/lineage\.jsonl:2: not a promoted model: field 'tier'/);
    expect(problems[1]).toMatch(/lineage\.jsonl:3: not JSON/);
  });
});

const planted = join(REPO_ROOT, "models/planted-vlm");
const have = existsSync(join(planted, "onnx/decoder_model_merged.onnx"));

describe.skipIf(!have)("a promoted wrapper on real weights (onnxruntime)", () => {
  let base: OrtModel;
  beforeAll(async () => {
    base = await loadModel(planted);
  });
  afterAll(() => base?.dispose());
  const reference = have
    ? (JSON.parse(readFileSync(join(planted, "eval-reference.json"), "utf8")) as {
        dim_scenes: string[];
        answers_image_bias: Record<string, string>;
      })
    : undefined;

  it("an L3b promotion answers as the validated intervention did, and its forward carries the same attention write", async () => {
    const lines = readFileSync(join(REPO_ROOT, "public/demo/pope.jsonl"), "utf8").trim().split("\n").slice(0, 12);
    const promoted = wrapRepair(base, "attention-bias:image:2", "planted-vlm+attention-bias-image-2");
    for (const line of lines) {
      const c = JSON.parse(line) as { id: string; input: { prompt: string; image: string } };
      const input = {
        prompt: c.input.prompt,
        image: new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo", c.input.image))),
      };
      expect(await promoted.generate(input, { maxNewTokens: 24 }), c.id).toBe(reference!.answers_image_bias[c.id]);
    }
    const c = JSON.parse(lines[0]!) as { input: { prompt: string; image: string } };
    const input = {
      prompt: c.input.prompt,
      image: new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo", c.input.image))),
    };
    const wrapped = await promoted.forward(input, { logitsAt: [-1] });
    const written = await base.forward(input, { logitsAt: [-1], attentionBias: { positions: "image", value: 2 } });
    const plain = await base.forward(input, { logitsAt: [-1] });
    expect([...wrapped.logits!.values]).toEqual([...written.logits!.values]);
    expect([...wrapped.logits!.values]).not.toEqual([...plain.logits!.values]);
  });

  it("an L1 promotion rewrites the prompt for generate and forward alike; an unknown repair is refused by name", async () => {
    const promoted = wrapRepair(base, "rewrite:context", "p+rewrite-context");
    const line = JSON.parse(readFileSync(join(REPO_ROOT, "public/demo/pope.jsonl"), "utf8").split("\n")[0]!) as {
      input: { prompt: string; image: string };
    };
    const input = {
      prompt: line.input.prompt,
      image: new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo", line.input.image))),
    };
    const rewritten = { ...input, prompt: rewrite("context").apply(input.prompt) };
    expect(await promoted.generate(input)).toBe(await base.generate(rewritten));
    expect((await promoted.forward(input)).tokens).toEqual((await base.forward(rewritten)).tokens);
    expect(() => wrapRepair(base, "prune:heads", "x")).toThrow(
      /repair 'prune:heads' cannot be applied to .*planted-vlm.*: it rebuilds 'rewrite:context'/,
    );
  });
});
