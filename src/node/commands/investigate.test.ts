import Ajv2020 from "ajv/dist/2020.js";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { parseEventLines } from "../../agent/events.ts";
import schema from "../../agent/events.schema.json" with { type: "json" };
import { parseReport, type Report } from "../../report/schema.ts";
import { objectName, parseScene } from "../../agent/probes/scene.ts";
import { toRgb } from "../../models/image.ts";
import { FileStore } from "../../store/files.node.ts";

const bin = fileURLToPath(new URL("../bin.mjs", import.meta.url));
const haveModel = existsSync(
  fileURLToPath(new URL("../../../models/tiny-vlm/onnx/decoder_model_merged.onnx", import.meta.url)),
);

function investigate(args: string[]) {
  return spawnSync(bin, ["investigate", ...args], { encoding: "utf8", timeout: 170_000 });
}

/** Starts `investigate` and SIGKILLs it as soon as a printed line matches `when`; resolves with what it printed. */
function killWhen(args: string[], when: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ["investigate", ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let killed = false;
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (!killed && when.test(out)) {
        killed = true;
        child.kill("SIGKILL");
      }
    });
    child.on("exit", () => (killed ? resolve(out) : reject(new Error(`the run ended before ${when}:\n${out}`))));
  });
}

/** Items stored in a run of the file store, counted line by line (every judged case is one item, stored once). */
function storedItems(out: string, runSuffix: string): { ids: string[]; indexes: number[] } {
  const runs = readdirSync(join(out, "store", "runs")).filter((r) => r.endsWith(runSuffix));
  expect(runs).toHaveLength(1);
  const lines = readFileSync(join(out, "store", "runs", runs[0]!, "items.jsonl"), "utf8")
    .trim()
    .split("\n");
  const items = lines.flatMap((l) => (JSON.parse(l) as { items: { caseId: string; index: number }[] }).items);
  return { ids: items.map((i) => i.caseId), indexes: items.map((i) => i.index) };
}

/** What a run decided, without timestamps and event numbers. */
function decisions(r: Report) {
  return {
    hypotheses: r.hypotheses.map((h) => [h.signal, h.direction, h.verdict, h.sealedN, h.eValue, h.sealedEffect?.value]),
    repairs: r.repairs?.candidates.map((c) => [c.tier, c.candidate, c.fixed, c.broken, c.p, c.e, c.validated]),
    failures: r.provenance.data.labelDistribution,
  };
}

describe.skipIf(!haveModel)("evalrx investigate on the bundled tiny VLM and demo set", () => {
  let reference: Report;
  // No lessons: a run must not be reordered by what an earlier test run left in a shared lessons file.
  const small = ["--sample", "120", "--seed", "1", "--lessons", "none"];

  beforeAll(() => {
    const out = mkdtempSync(join(tmpdir(), "evalrx-inv-ref-"));
    const r = investigate([...small, "--out", out, "--json"]);
    expect(r.status, r.stderr).toBe(0);
    reference = parseReport(r.stdout);
  }, 170_000);

  it("with defaults: runs M1–M5, prints one line per stage, writes report.json, events.jsonl and report.html", () => {
    const out = mkdtempSync(join(tmpdir(), "evalrx-inv-"));
    const r = investigate(["--out", out, "--lessons", join(out, "lessons.jsonl")]);
    expect(r.status, r.stderr).toBe(0);
    for (const stage of [
      /M1 probe +\d+ cases · \d+ fail/,
      /M2 explore +\d+ signals tried/,
      /M3 diagnose/,
      /M4 verify|no signal survived/,
      /outcome:/,
    ])
      expect(r.stdout).toMatch(stage);
    const report = parseReport(readFileSync(join(out, "report.json"), "utf8"));
    expect(report.kind).toBe("investigate");
    expect(report.complete).toBe(true);
    expect(report.provenance.data.n).toBe(600);
    expect(report.provenance.data.sampled).toBeUndefined();
    expect(report.probe!.modelKind).toBe("VLM");
    expect(report.probe!.analyzers.filter((a) => a.ran).map((a) => a.name)).toEqual(
      expect.arrayContaining(["attention", "attentionSink", "attentionRollout", "logitLens", "pope"]),
    );
    // Whatever the model does, every analyzer signal is either tested or named with the reason it could not be.
    const accounted = [...report.signals.tested.map((s) => s.signal), ...report.signals.untestable.map((u) => u.name)];
    for (const signal of ["attention.imageShare.pooled", "sink.mass.pooled", "rollout.peak", "tokenEntropy.answer"])
      expect(accounted).toContain(signal);
    expect(report.probe!.findings.find((f) => f.analyzer === "pope")!.summary).toMatch(/accuracy/);
    for (const h of report.hypotheses) {
      expect(h).toMatchObject({
        signal: expect.any(String),
        direction: expect.any(String),
        verdict: expect.stringMatching(/SUPPORTED|REFUTED|INCONCLUSIVE/),
      });
      expect(h.sealedN).toBeGreaterThan(0);
    }
    expect(report.repairs!.maxTier).toBe("L3b");
    expect(report.repairs!.candidates.map((c) => c.tier)).toEqual(expect.arrayContaining(["L1", "L2", "L3a", "L3b"]));
    expect(report.repairs!.recommendation.length).toBeGreaterThan(10);
    const events = parseEventLines(readFileSync(join(out, "events.jsonl"), "utf8"));
    expect(events.at(-1)!.type).toBe("run.finished");
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    ajv.addFormat("date-time", (x: string) => !Number.isNaN(Date.parse(x)));
    const validate = ajv.compile(schema);
    for (const e of events) expect(validate(e), `${e.type}: ${JSON.stringify(validate.errors)}`).toBe(true);
    const html = readFileSync(join(out, "report.html"), "utf8");
    expect(html).toContain("Repair ladder");
    expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org)/);
  }, 170_000);

  it("killed while labelling (M1), --resume finishes without judging a stored case again", async () => {
    const out = mkdtempSync(join(tmpdir(), "evalrx-inv-m1-"));
    // The first label line: at least 40 of 120 stored, not all (stored counts arrive in batches, not at exact 40s).
    await killWhen([...small, "--out", out], /M1 label +(?!120\/)\d+\/120 cases judged/);
    const before = storedItems(out, "-m1-label").ids.length;
    expect(before).toBeGreaterThanOrEqual(40);
    expect(before).toBeLessThan(120);
    const r = investigate([...small, "--out", out, "--resume", "--json"]);
    expect(r.status, r.stderr).toBe(0);
    const label = storedItems(out, "-m1-label");
    expect(label.ids).toHaveLength(120);
    expect(new Set(label.indexes).size).toBe(120);
    expect(decisions(parseReport(r.stdout))).toEqual(decisions(reference));
  }, 170_000);

  it("killed while repairing (M5), --resume finishes without judging a stored case again", async () => {
    const out = mkdtempSync(join(tmpdir(), "evalrx-inv-m5-"));
    await killWhen([...small, "--out", out], /L1 prompt rewrite 'context'/);
    const labelled = storedItems(out, "-m1-label").ids.length;
    const r = investigate([...small, "--out", out, "--resume", "--json"]);
    expect(r.status, r.stderr).toBe(0);
    expect(storedItems(out, "-m1-label").ids).toHaveLength(labelled);
    const report = parseReport(r.stdout);
    const sealed = report.provenance.holdout!.sealedN;
    for (const suffix of ["-m5-rewrite_context", "-m5-self-consistency_3"]) {
      const { indexes } = storedItems(out, suffix);
      expect(indexes).toHaveLength(sealed);
      expect(new Set(indexes).size).toBe(sealed);
    }
    expect(decisions(report)).toEqual(decisions(reference));
    expect(parseEventLines(readFileSync(join(out, "events.jsonl"), "utf8")).some((e) => e.type === "run.resumed")).toBe(
      true,
    );
  }, 170_000);
});

describe.skipIf(!haveModel)("evalrx investigate: failure modes and lessons carried across runs", () => {
  it("the second investigation reads the first one's lessons (real JSONL store) and its report names them", () => {
    const dir = mkdtempSync(join(tmpdir(), "evalrx-inv-lessons-"));
    const lessons = join(dir, "lessons.jsonl");
    const quick = ["--sample", "80", "--seed", "1", "--max-tier", "none", "--lessons", lessons, "--json"];
    const first = investigate([...quick, "--out", join(dir, "a")]);
    expect(first.status, first.stderr).toBe(0);
    const a = parseReport(first.stdout);
    // The first run had nothing to read, left its lessons, and reports its failure modes (exploration split only).
    expect(a.lessons!.used).toEqual([]);
    expect(a.lessons!.recorded).toBeGreaterThan(0);
    expect(a.modes!.split).toBe("exploration");
    expect(a.modes!.k).toBeGreaterThanOrEqual(1);
    expect(a.modes!.why).toMatch(/gap statistic|one mode/);
    for (const mode of a.modes!.modes) {
      expect(a.hypotheses.find((h) => h.id === mode.hypothesis)!.signal).toBe(`mode=${mode.id}`);
      expect(mode.defining.length).toBeGreaterThan(0);
      expect(mode.representatives.length).toBeGreaterThan(0);
      expect(a.evidence!.hypotheses.find((e) => e.hypothesis === mode.id)!.failing.map((c) => c.id)).toEqual(
        mode.representatives,
      );
    }
    const stored = readFileSync(lessons, "utf8").trim().split("\n");
    expect(stored).toHaveLength(a.lessons!.recorded!);

    const second = investigate([...quick, "--out", join(dir, "b")]);
    expect(second.status, second.stderr).toBe(0);
    const b = parseReport(second.stdout);
    const firstIds = stored.map((line) => (JSON.parse(line) as { id: string }).id);
    expect(b.lessons!.used.length).toBeGreaterThan(0);
    for (const u of b.lessons!.used) {
      expect(firstIds).toContain(u.id);
      expect(u.runId).toBe(a.runId);
      expect(u.relevance).toBe(1);
    }
    expect(readFileSync(join(dir, "b", "report.html"), "utf8")).toContain("Lessons from earlier runs");
    // Lessons order the work; they never change a test: the same cases get the same verdicts.
    const verdicts = (r: Report) => r.hypotheses.map((h) => `${h.signal}:${h.verdict}`).sort();
    expect(verdicts(b)).toEqual(verdicts(a));
  }, 120_000);
});

describe.skipIf(!haveModel)("evalrx investigate --search-probes: the dataset grows with failing cases", () => {
  it("synthesizes failing variants before M1, stores them as a new dataset version that M1 probes, each expected answer right by construction", async () => {
    const out = mkdtempSync(join(tmpdir(), "evalrx-inv-probes-"));
    const r = investigate([
      ...["--sample", "60", "--seed", "1", "--max-tier", "none", "--lessons", "none"],
      ...["--search-probes", "--probe-budget", "100", "--out", out, "--json"],
    ]);
    expect(r.status, r.stderr).toBe(0);
    const report = parseReport(r.stdout);
    const p = report.probeSearch!;
    expect(p.calls! + p.seedCalls!).toBeLessThanOrEqual(100);
    expect(p.kept).toBeGreaterThan(0);
    expect(p.families!.reduce((s, f) => s + f.kept, 0)).toBe(p.kept);
    expect(p.dataset.cases).toBe(60 + p.kept!);
    // M1 probed the grown version: the seed cases and every kept one.
    expect(report.probe!.cases).toBe(p.dataset.cases);
    expect(readFileSync(join(out, "report.html"), "utf8")).toContain("Probe search: synthesized failing cases");
    const store = await FileStore.open(join(out, "store"));
    const stored = await store.cases(p.dataset.id);
    const synthesized = stored.filter((c) => c.tags.includes("synthesized"));
    expect(synthesized).toHaveLength(p.kept!);
    for (const c of synthesized) {
      const provenance = c.meta.provenance as { synthesized: boolean; parent: string; family: string };
      expect(provenance.synthesized).toBe(true);
      expect(stored.some((s) => s.id === provenance.parent)).toBe(true);
      // Re-derive the expected answer from the stored, edited pixels: "yes" exactly when the asked object is there.
      const asked = /(\w+ (?:circle|square|triangle))\b/.exec(c.input.prompt)![1]!;
      const image = await store.getImage(c.input.image!);
      const names = parseScene(toRgb(image!.bytes)).objects.map(objectName);
      expect(c.expected, `${c.id}: ${c.input.prompt} on ${names.join(", ")}`).toBe(
        names.includes(asked) ? "yes" : "no",
      );
    }
  }, 170_000);
});
