import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { parseEventLines, type RunEvent } from "../../agent/events.ts";
import { investigate } from "../../agent/investigate.ts";
import { stageLine } from "../../agent/progress.ts";
import { TIERS, type Tier } from "../../agent/repair.ts";
import type { FailureCase, ImagePixels } from "../../core/index.ts";
import { importDataset, select, sha256Hex, canonicalJson } from "../../datasets/index.ts";
import { chair, exact, openAICompatibleJudge, yesNo, type Evaluator } from "../../evals/index.ts";
import { loadModel, REPO_ROOT } from "../../models/load.node.ts";
import { toRgb } from "../../models/image.ts";
import { writeReportFiles } from "../../report/write.node.ts";
import { FileStore } from "../../store/files.node.ts";
import type { Command } from "../cli.ts";
import { numberOption } from "../eval-runs.ts";
import { codeVersion } from "./version.ts";

const usage = `evalrx investigate [--model models/tiny-vlm] [--data public/demo/pope.jsonl] [-q "What predicts the hallucinations?"]
                          [--holdout 0.4] [--max-tier L3b] [--seed 1] [--sample N|all] [--out DIR] [--json] [--resume]
                          [--judge URL --judge-model NAME]   (key from EVALRX_JUDGE_KEY)

  With no arguments it runs the bundled tiny VLM on the 600-question demo POPE set (about half a minute).
  --sample    a stable sample of N cases (the N with the smallest sha256(id)) for a quicker run; default all
  --max-tier  ceiling of the repair ladder: L1, L2, L3a, L3b (default), L4 (writes a fine-tune recipe), none
  --out       where report.json, events.jsonl, report.html and the run's store go (default .evalrx/investigate)
  --resume    continue the interrupted run in --out: stored labels, probes and repair runs are not judged again`;

/** The evaluators that label this dataset's cases: POPE-style yes/no, CHAIR for captions, else exact match. */
function evaluatorsFor(cases: readonly FailureCase[]): Evaluator[] {
  const yn = cases.every((c) =>
    ["yes", "no"].includes(
      String(c.expected ?? "")
        .trim()
        .toLowerCase(),
    ),
  );
  if (yn) return [yesNo()];
  if (cases.every((c) => Array.isArray(c.meta.objects))) {
    const vocabulary = [...new Set(cases.flatMap((c) => (c.meta.objects as unknown[]).map(String)))];
    return [chair(vocabulary)];
  }
  return [exact()];
}

function rgba(bytes: Uint8Array): ImagePixels {
  const rgb = toRgb(bytes);
  const data = new Uint8ClampedArray(rgb.width * rgb.height * 4);
  for (let i = 0; i < rgb.width * rgb.height; i++) {
    data[i * 4] = rgb.rgb[i * 3]!;
    data[i * 4 + 1] = rgb.rgb[i * 3 + 1]!;
    data[i * 4 + 2] = rgb.rgb[i * 3 + 2]!;
    data[i * 4 + 3] = 255;
  }
  return { width: rgb.width, height: rgb.height, data };
}

export const command: Command = {
  summary:
    "diagnose why a model fails: probe (M1), explore (M2), hypotheses (M3), sealed verdicts (M4), intervene and repair (M5)",
  usage,
  async run(args) {
    const { values } = parseArgs({
      args,
      options: {
        model: { type: "string" },
        data: { type: "string" },
        question: { type: "string", short: "q" },
        holdout: { type: "string" },
        "max-tier": { type: "string" },
        seed: { type: "string" },
        sample: { type: "string" },
        out: { type: "string" },
        json: { type: "boolean" },
        resume: { type: "boolean" },
        judge: { type: "string" },
        "judge-model": { type: "string" },
      },
    });
    const maxTier = (values["max-tier"] ?? "L3b") as Tier | "none";
    if (maxTier !== "none" && !TIERS.includes(maxTier))
      throw new Error(`--max-tier '${maxTier}' must be one of ${TIERS.join(", ")} or none`);
    const seed = numberOption("seed", values.seed, "1") ?? 1;
    const out = resolve(values.out ?? ".evalrx/investigate");
    const say = (line: string) => (values.json ? console.error(line) : console.log(line));

    const dataPath = resolve(values.data ?? join(REPO_ROOT, "public/demo/pope.jsonl"));
    if (!existsSync(dataPath)) throw new Error(`--data ${dataPath}: no such file`);
    const imported = await importDataset(new Uint8Array(readFileSync(dataPath)), { name: basename(dataPath) });
    if (imported.cases.length === 0)
      throw new Error(
        `--data ${dataPath}: no valid case (${imported.problems.length} bad rows; first: ${imported.problems[0]?.reason ?? "—"})`,
      );
    const sampleText = values.sample ?? "all";
    const sample = sampleText === "all" ? undefined : numberOption("sample", sampleText, "240");
    const cases = sample === undefined ? imported.cases : select(imported.cases, { sample });
    const sampled =
      cases.length < imported.cases.length
        ? `stable sample of ${cases.length} of ${imported.cases.length} cases (the ${cases.length} smallest sha256(id)), chosen with --sample; drop it for every case`
        : undefined;
    const fingerprint = sha256Hex(cases.map((c) => canonicalJson(c)).join("\n")).slice(0, 12);

    const modelPath = values.model ?? "tiny-vlm";
    const model = await loadModel(modelPath === "models/tiny-vlm" ? "tiny-vlm" : modelPath);
    const eventsPath = join(out, "events.jsonl");
    let previous: RunEvent[] | undefined;
    let runId = `investigate-${fingerprint}-s${seed}-${new Date().toISOString().replace(/[-:.]/g, "").slice(0, 15)}`;
    if (values.resume) {
      if (!existsSync(eventsPath)) throw new Error(`--resume: no ${eventsPath} to resume; run without --resume first`);
      previous = parseEventLines(readFileSync(eventsPath, "utf8"));
      const started = previous.find((e) => e.type === "run.started");
      if (!started) throw new Error(`--resume: ${eventsPath} has no run.started event`);
      if (previous.some((e) => e.type === "run.finished"))
        throw new Error(`--resume: the run in ${out} already finished`);
      runId = started.runId;
    }
    mkdirSync(out, { recursive: true });
    if (previous) {
      // The interrupted log is kept beside the new one: the audit trail of what ran before the kill.
      let k = 1;
      while (existsSync(join(out, `events.interrupted-${k}.jsonl`))) k++;
      copyFileSync(eventsPath, join(out, `events.interrupted-${k}.jsonl`));
    }
    writeFileSync(eventsPath, "");
    const store = await FileStore.open(join(out, "store"));
    const imageDir = dirname(dataPath);
    const judge = values.judge
      ? openAICompatibleJudge({
          baseUrl: values.judge,
          model: values["judge-model"] ?? "default",
          apiKey: process.env.EVALRX_JUDGE_KEY,
        })
      : undefined;
    say(
      `investigate ${model.spec.key} on ${basename(dataPath)}: ${cases.length} cases${sampled ? " (sampled)" : ""}${values.resume ? `, resuming ${runId}` : ""}`,
    );
    const { report } = await investigate({
      store,
      model,
      dataset: { id: basename(dataPath).replace(/\.\w+$/, ""), cases, source: basename(dataPath), fingerprint },
      evaluators: evaluatorsFor(cases),
      images: async (ref) => new Uint8Array(readFileSync(resolve(imageDir, ref))),
      decodeImage: rgba,
      protocol: { question: values.question ?? "What predicts the hallucinations?" },
      runId,
      holdout: numberOption("holdout", values.holdout, "0.4") ?? 0.4,
      seed,
      alpha: 0.05,
      maxTier,
      ...(judge ? { judge } : {}),
      codeVersion: codeVersion(),
      ...(sampled ? { sampled } : {}),
      modelInfo: {
        key: model.spec.key,
        family: model.spec.family,
        source: model.spec.source,
        layers: model.spec.layers,
        heads: model.spec.heads,
        capabilities: [...model.capabilities],
      },
      ...(previous ? { previous } : {}),
      sink: (event) => {
        appendFileSync(eventsPath, JSON.stringify(event) + "\n");
        const line = stageLine(event);
        if (line) say(line);
      },
      onLabelCase: (done, total) => {
        if (done > 0 && (done % 40 === 0 || done === total)) say(`M1 label     ${done}/${total} cases judged`);
      },
      onProbeCase: (done, total) => {
        if (done % 40 === 0 || done === total) say(`M1 probe     ${done}/${total} cases probed`);
      },
    });
    const paths = writeReportFiles(out, report);
    say(`wrote ${paths.json}, ${eventsPath}, ${paths.html}`);
    if (values.json) console.log(JSON.stringify(report, null, 2));
    await model.dispose();
    return 0;
  },
};
