import Ajv2020 from "ajv/dist/2020.js";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FailureCase } from "../../core/index.ts";
import { importDataset } from "../../datasets/index.ts";
import { yesNo } from "../../evals/index.ts";
import { loadModel, REPO_ROOT } from "../../models/load.node.ts";
import type { OrtModel } from "../../models/ort-model.ts";
import { FileStore } from "../../store/files.node.ts";
import schema from "../events.schema.json" with { type: "json" };
import { childSandbox } from "../sandbox/child-sandbox.node.ts";
import { investigateAgentic } from "./investigate-agentic.ts";
import { rulePolicy } from "./judges.ts";

/**
 * The rule-based judge end to end on the demo set: the bundled planted-vlm (its dim scenes lose image attention to
 * the sink, by design) through onnxruntime-node, a real file store, the locked child sandbox. A slice of the demo
 * scenes, whole, keeps it to seconds; the ladder's ceiling is L1.
 */
const image = (ref: string) => new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo", ref)));

let slice: FailureCase[] = [];
let model: OrtModel;
beforeAll(async () => {
  const imported = await importDataset(new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo/pope.jsonl"))), {
    name: "pope.jsonl",
  });
  slice = imported.cases.filter((c) => Number(/(\d+)$/.exec(String(c.cluster))![1]) <= 40);
  model = await loadModel(join(REPO_ROOT, "models/planted-vlm"));
});
afterAll(() => model?.dispose());

describe("investigate --agentic with the rule policy (real model, real store)", () => {
  it("walks the loop within the host's rules and the report shows the path and the analysis", async () => {
    const store = await FileStore.open(mkdtempSync(join(tmpdir(), "evalrx-agentic-")));
    const { report, events, agentic } = await investigateAgentic({
      store,
      model,
      dataset: { id: "pope", cases: slice, source: "pope.jsonl", fingerprint: "agentic-test" },
      evaluators: [yesNo()],
      images: async (ref) => image(ref),
      protocol: { question: "What predicts the hallucinations?" },
      runId: "agentic-1",
      seed: 1,
      maxTier: "L1",
      searchProbes: { budget: 20 },
      agentic: { judge: rulePolicy({ searchProbes: true }), sandbox: childSandbox({ timeMs: 5000 }) },
    });
    const path = agentic.turns.map((t) => t.tool);
    expect(path.slice(0, 3)).toEqual(["run_probe", "run_stats", "search_probes"]);
    // The probe search ran for real on the exploration cases alone, within its budget, its result on the board.
    const searched = events.find((e) => e.type === "probes.searched")!.payload;
    expect(searched.budget).toBe(20);
    expect(agentic.state.probes).toMatchObject({ calls: expect.any(Number) });
    expect(agentic.state.probes!.calls).toBeLessThanOrEqual(20);
    expect(path).toContain("run_analysis");
    expect(path.indexOf("propose_hypotheses")).toBeLessThan(path.indexOf("test_hypothesis"));
    expect(path.at(-1)).toBe("stop");
    expect(agentic.turns.every((t) => t.status === "ran")).toBe(true);
    // The stop gate: success exactly when a hypothesis was SUPPORTED on the sealed split.
    const supported = report.hypotheses.filter((h) => h.verdict === "SUPPORTED").map((h) => h.id);
    expect(agentic.stop.success).toBe(supported.length > 0);
    if (agentic.stop.success) expect(supported).toContain(agentic.stop.hypothesis);
    // An attention hypothesis SUPPORTED → the policy tested its mechanism by writing attention (M5).
    if (report.hypotheses.some((h) => h.verdict === "SUPPORTED" && /^(attention\.image|sink\.mass)/.test(h.signal)))
      expect(path).toContain("run_surgery");
    // run_surgery runs M5's one mechanism test (testMechanism), the fixed loop's, at γ = α/2.
    if (path.includes("run_surgery"))
      expect(events.find((e) => e.type === "intervention.tested")?.payload.eMethod).toMatch(
        /mechanism test's γ = α\/2 = 0\.025/,
      );
    expect(path).toContain("run_fix");
    expect(report.repairs).toBeDefined();
    expect(report.probe?.cases).toBe(slice.length);
    expect(report.agentic!.turns).toHaveLength(agentic.turns.length);
    expect(report.analyses![0]!.ok).toBe(true);
    expect(report.analyses![0]!.runtime).toMatch(/node child \(--(experimental-)?permission/);
    expect(events.filter((e) => e.type === "sealed.opened")).toHaveLength(1);
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    ajv.addFormat("date-time", (s: string) => !Number.isNaN(Date.parse(s)));
    const validate = ajv.compile(schema);
    for (const e of events) expect(validate(e), `${e.type}: ${JSON.stringify(validate.errors)}`).toBe(true);
  }, 120_000);
});
