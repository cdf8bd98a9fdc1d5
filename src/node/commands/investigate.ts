import {
  appendFileSync,
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { parseEventLines, type RunEvent } from "../../agent/events.ts";
import { investigate } from "../../agent/investigate.ts";
import { investigateAgentic } from "../../agent/agentic/investigate-agentic.ts";
import { rulePolicy, textJudge } from "../../agent/agentic/judges.ts";
import { childSandbox } from "../../agent/sandbox/child-sandbox.node.ts";
import { LessonFile } from "../../agent/lessons/lesson-file.node.ts";
import { buildReport } from "../../agent/report.ts";
import { stageLine } from "../../agent/progress.ts";
import { tierRange } from "../../agent/repair.ts";
import type { FailureCase, ImagePixels, Model } from "../../core/index.ts";
import { importDataset, select, sha256Hex, canonicalJson } from "../../datasets/index.ts";
import { checkImage } from "../../datasets/images.ts";
import { openAICompatibleJudge } from "../../evals/index.ts";
import { labelEvaluators } from "../../evals/label-evaluators.ts";
import { REPO_ROOT } from "../../models/load.node.ts";
import { toRgb } from "../../models/image.ts";
import { parseReport } from "../../report/schema.ts";
import { writeError, writeFileAtomic, writeReportFiles } from "../../report/write.node.ts";
import { FileStore } from "../../store/files.node.ts";
import { FileLock } from "../../store/lock.node.ts";
import type { Command } from "../cli.ts";
import { confinedReader, modelImage, portablePath, readRegularFile } from "../confined.ts";
import { numberOption, parseCommandArgs } from "../eval-runs.ts";
import { faultPause, faultPoint } from "../faults.ts";
import { cliL4Executor } from "./l4-executor.ts";
import { loadNamedModel } from "./model.ts";
import { codeVersion } from "./version.ts";

const usage = `evalrx investigate [--model models/tiny-vlm] [--data public/demo/pope.jsonl] [-q "What predicts the hallucinations?"]
                          [--holdout 0.4] [--max-tier L3b] [--min-tier L1] [--seed 1] [--sample N|all] [--out DIR] [--json] [--resume]
                          [--root DIR] [--lessons FILE|none] [--search-probes [--probe-budget N] [--judge-paraphrases]]
                          [--judge URL --judge-model NAME]   (key from EVALRX_JUDGE_KEY)
                          [--agentic [--max-turns N]]

  With no arguments it runs the bundled tiny VLM on the 600-question demo POPE set (about half a minute).
  --sample    a stable sample of N cases (the N with the smallest sha256(id)) for a quicker run; default all
  --max-tier  ceiling of the repair ladder: L1, L2, L3a, L3b (default), L4 (trains LoRA adapters on the last decoder
              layer's attention projections of a model small enough to train here, merged into
              <out>/l4/<model>+lora-…, and writes a fine-tune recipe), none
  --min-tier  the ladder's first rung (default L1, not above --max-tier): lower rungs are not run, and the rungs
              that run share M5's α (e.g. --min-tier L3b tests the attention repair a confirmed mechanism names)
  --out       where report.json, events.jsonl, report.html and the run's store go (default .evalrx/investigate)
  --resume    continue the interrupted run in --out: stored labels, probes and repair runs are not judged again;
              refused when --model, --data, --sample, --seed, --holdout, --max-tier, --min-tier or -q differ from the run's
  --root      the folder image paths resolve in (default: the data file's folder); nothing outside it is read
  --model     a bundled key, a model folder, or a promoted model (evalrx model promote): its lineage goes in the report
  --lineage   the lineage file promoted models are read from (default .evalrx/lineage.jsonl)
  --lessons   the lessons of earlier runs (JSONL, default .evalrx/lessons.jsonl beside the default --out): read at
              the start to order analyzers and hypotheses (never a test), this run's appended at the end; none: neither
  --search-probes  before M1, synthesize failing variants of the seed cases: scene edits of the demo scenes,
              occlusions, crops and pastes of photos with object boxes, rule paraphrases of yes/no questions, and
              rewordings, distractors and operand edits of text probes (tiny-lm's reversal cases); expected answers
              by construction. Stored with the cases as a new dataset version, which M1 probes; --probe-budget
              model calls in all (default 400). --judge-paraphrases (with --judge): the judge
              endpoint also rewords the questions, each wording checked (same object, yes/no, no answer leak)
  --agentic   a judge picks each next step from an evidence board (the --judge endpoint, else the rule policy);
              the host keeps the rules (caps, order, one sealed read, the stop gate); analyses run in a locked child
  --max-turns turns the agentic judge gets, refused ones included (default 20)
  One writer per --out folder: a second investigate on the same folder is refused while the first runs.
  report.json and report.html are written whole (temp file + rename); the run is marked finished in
  events.jsonl only once they are on disk.`;

/** The options a run was started with, as its first events recorded them. */
interface RunOptions {
  readonly question: string;
  readonly seed: number;
  readonly holdout: number;
  readonly maxTier: string;
  readonly model: string;
  readonly source: string;
  readonly fingerprint: string;
  readonly n: number;
}

/** What differs between the interrupted run and this command line, one phrase per option. */
function differences(before: RunOptions, now: RunOptions): string[] {
  const out: string[] = [];
  if (before.model !== now.model) out.push(`--model is '${now.model}' where the run used '${before.model}'`);
  if (before.source !== now.source) out.push(`--data is '${now.source}' where the run read '${before.source}'`);
  else if (before.fingerprint !== now.fingerprint)
    out.push(
      `--data/--sample select ${now.n} case(s) (fingerprint ${now.fingerprint}) where the run had ${before.n} (fingerprint ${before.fingerprint})`,
    );
  if (before.seed !== now.seed) out.push(`--seed is ${now.seed} where the run used ${before.seed}`);
  if (before.holdout !== now.holdout) out.push(`--holdout is ${now.holdout} where the run used ${before.holdout}`);
  if (before.maxTier !== now.maxTier) out.push(`--max-tier is ${now.maxTier} where the run used ${before.maxTier}`);
  if (before.question !== now.question)
    out.push(`-q asks ${JSON.stringify(now.question)} where the run asked ${JSON.stringify(before.question)}`);
  return out;
}

/** The options recorded by a log's run.started and data.loaded events. */
function recorded(events: readonly RunEvent[]): RunOptions | undefined {
  const started = events.find((e) => e.type === "run.started")?.payload as Record<string, unknown> | undefined;
  const data = (events.find((e) => e.type === "data.loaded")?.payload ?? {}) as Record<string, unknown>;
  if (!started) return undefined;
  return {
    question: String(started["question"] ?? ""),
    seed: Number(started["seed"]),
    holdout: Number(started["holdout"]),
    maxTier: String(started["maxTier"]),
    model: String((started["model"] as { key?: unknown } | undefined)?.key ?? ""),
    source: String(data["source"] ?? ""),
    fingerprint: String(data["fingerprint"] ?? ""),
    n: Number(data["n"]),
  };
}

/** Appends whole lines to a log and flushes them to disk; a failure names the file. */
/** The interrupted log is kept beside the new one (`events.interrupted-<k>.jsonl`): the audit trail of what ran before the kill. */
function keepInterrupted(out: string, eventsPath: string): string {
  let k = 1;
  while (existsSync(join(out, `events.interrupted-${k}.jsonl`))) k++;
  const path = join(out, `events.interrupted-${k}.jsonl`);
  writeFileAtomic(path, readFileSync(eventsPath));
  return path;
}

function appendDurably(path: string, text: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(path, "a");
    const bytes = Buffer.from(text);
    for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at);
    fsyncSync(fd);
  } catch (error) {
    throw writeError(error, path);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** True when the folder holds a whole report of this run (both files there, report.json valid). */
function reportWritten(out: string): boolean {
  try {
    parseReport(readFileSync(join(out, "report.json"), "utf8"));
    return existsSync(join(out, "report.html"));
  } catch {
    return false;
  }
}

function rgba(bytes: Uint8Array | ImagePixels): ImagePixels {
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

/**
 * A progress line each time `done` passes another multiple of `step`, and once at the end: counts arrive in
 * batches (stored items are written behind the judging), so `done` need not land on a multiple itself.
 */
function everyStep(step: number, line: (done: number, total: number) => void) {
  let said = 0;
  let ended = false;
  return (done: number, total: number) => {
    if (done === total ? ended : Math.floor(done / step) <= said) return;
    said = Math.floor(done / step);
    ended = done === total;
    line(done, total);
  };
}

export const command: Command = {
  summary:
    "diagnose why a model fails: probe (M1), explore (M2), hypotheses (M3), sealed verdicts (M4), intervene and repair (M5)",
  usage,
  async run(args) {
    const { values, positionals } = parseCommandArgs(
      args,
      {
        model: { type: "string" },
        data: { type: "string" },
        question: { type: "string", short: "q" },
        holdout: { type: "string" },
        "max-tier": { type: "string" },
        "min-tier": { type: "string" },
        seed: { type: "string" },
        sample: { type: "string" },
        out: { type: "string" },
        json: { type: "boolean" },
        resume: { type: "boolean" },
        agentic: { type: "boolean" },
        "max-turns": { type: "string" },
        lineage: { type: "string" },
        root: { type: "string" },
        lessons: { type: "string" },
        "search-probes": { type: "boolean" },
        "probe-budget": { type: "string" },
        "judge-paraphrases": { type: "boolean" },
        judge: { type: "string" },
        "judge-model": { type: "string" },
      },
      usage,
    );
    if (positionals.length) throw new Error(`unexpected argument '${positionals[0]}'; usage: ${usage.split("\n")[0]}`);
    const { minTier, maxTier } = tierRange(values["min-tier"], values["max-tier"] ?? "L3b", {
      min: "--min-tier",
      max: "--max-tier",
    });
    if (values.agentic && values["min-tier"])
      throw new Error("--min-tier is for the fixed loop: with --agentic the judge chooses which rungs to run");
    const seed = numberOption("seed", values.seed, "1") ?? 1;
    const out = resolve(values.out ?? ".evalrx/investigate");
    if (values.agentic && values.resume)
      throw new Error("--agentic does not resume an interrupted run; start it again in a new --out folder");
    const say = (line: string) => (values.json ? console.error(line) : console.log(line));

    const holdout = numberOption("holdout", values.holdout, "0.4") ?? 0.4;
    const question = values.question ?? "What predicts the hallucinations?";

    const dataPath = resolve(values.data ?? join(REPO_ROOT, "public/demo/pope.jsonl"));
    const imported = await importDataset(await readRegularFile(dataPath, `--data ${values.data ?? dataPath}`), {
      name: basename(dataPath),
    });
    if (imported.cases.length === 0)
      throw new Error(
        `--data ${dataPath}: no valid case (${imported.problems.length} bad rows; first: ${imported.problems[0]?.reason ?? "—"})`,
      );
    const sampleText = values.sample ?? "all";
    const sample = sampleText === "all" ? undefined : numberOption("sample", sampleText, "240");
    const chosen = sample === undefined ? imported.cases : select(imported.cases, { sample });
    // Every image is read (inside the data folder) and decoded up front: a case whose image cannot be used is
    // named and left out, and the run goes on with the others.
    const readImage = confinedReader(values.root ? resolve(values.root) : dirname(dataPath));
    const imageCheck = new Map<string, Promise<string | undefined>>();
    const badImage = (ref: string) => {
      let found = imageCheck.get(ref);
      if (!found) {
        found = readImage(ref).then(
          (bytes) => {
            const checked = checkImage(bytes);
            if ("reason" in checked) return `image '${ref}' is not usable: ${checked.reason}`;
            try {
              toRgb(modelImage(bytes)); // what the runtime will do with it
              return undefined;
            } catch (error) {
              return `image '${ref}' cannot be read by the model runtime: ${(error as Error).message}`;
            }
          },
          (error: unknown) => (error as Error).message,
        );
        imageCheck.set(ref, found);
      }
      return found;
    };
    const cases: FailureCase[] = [];
    for (const c of chosen) {
      const why = c.input.image !== undefined ? await badImage(c.input.image) : undefined;
      if (why) console.error(`case '${c.id}': ${why}; left out of the investigation`);
      else cases.push(c);
    }
    if (cases.length === 0) throw new Error(`--data ${dataPath}: no case has a usable image`);
    const notes: string[] = [];
    if (chosen.length < imported.cases.length)
      notes.push(
        `stable sample of ${chosen.length} of ${imported.cases.length} cases (the ${chosen.length} smallest sha256(id)), chosen with --sample; drop it for every case`,
      );
    if (cases.length < chosen.length)
      notes.push(
        `${chosen.length - cases.length} case(s) left out: their images cannot be used (each named on stderr)`,
      );
    const sampled = notes.length ? notes.join("; ") : undefined;
    const fingerprint = sha256Hex(cases.map((c) => canonicalJson(c)).join("\n")).slice(0, 12);

    try {
      mkdirSync(out, { recursive: true });
    } catch (error) {
      throw writeError(error, out);
    }
    // One writer per output folder, from the first read of its log to the last write.
    const folderLock = await FileLock.acquire(join(out, "writer.lock"), {
      runId: out,
      what: `investigate --out ${out}`,
      subject: `the output folder ${out}`,
    });
    const modelPath = values.model ?? "tiny-vlm";
    let model: Model | undefined;
    let lineage: Awaited<ReturnType<typeof loadNamedModel>> | undefined;
    let l4: ReturnType<typeof cliL4Executor> | undefined;
    try {
      const eventsPath = join(out, "events.jsonl");
      let previous: RunEvent[] | undefined;
      let runId = `investigate-${fingerprint}-s${seed}-${new Date().toISOString().replace(/[-:.]/g, "").slice(0, 15)}`;
      if (values.resume) {
        if (!existsSync(eventsPath))
          throw new Error(`--resume: no ${eventsPath} to resume; run without --resume first`);
        previous = parseEventLines(readFileSync(eventsPath, "utf8"));
        const started = previous.find((e) => e.type === "run.started");
        if (!started) {
          // Killed before its first event was durable: nothing of that run exists, so this one starts afresh.
          const kept = keepInterrupted(out, eventsPath);
          say(
            `--resume: ${eventsPath} holds no run.started event (the run was stopped before its first event was written); starting it afresh, the old file kept as ${kept}`,
          );
          previous = undefined;
        } else runId = started.runId;
        if (previous?.some((e) => e.type === "run.finished")) {
          if (reportWritten(out)) throw new Error(`--resume: the run in ${out} already finished`);
          // Finished, but its report did not reach the disk: the report is built from the log alone.
          const paths = writeReportFiles(out, buildReport(previous));
          say(
            `the run in ${out} had finished; its report was missing and is written again: ${paths.json}, ${paths.html}`,
          );
          return 0;
        }
      }
      lineage = await loadNamedModel(modelPath === "models/tiny-vlm" ? "tiny-vlm" : modelPath, {
        memo: true,
        decodeImage: rgba,
        ...(values.lineage ? { lineage: values.lineage } : {}),
      });
      model = lineage.model;
      const current: RunOptions = {
        question,
        seed,
        holdout,
        maxTier,
        model: model.spec.key,
        source: basename(dataPath),
        fingerprint,
        n: cases.length,
      };
      const before = previous && recorded(previous);
      const changed = before ? differences(before, current) : [];
      if (changed.length)
        throw new Error(
          `--resume: this command line differs from the run in ${out}: ${changed.join("; ")}. Resume with the run's options, or start a new run in another --out folder`,
        );
      // The new log is written beside the old and renamed over it: a kill at any moment leaves one whole log.
      const kept = (previous ?? []).filter((e) => e.type === "run.started" || e.type === "data.loaded");
      if (previous) {
        keepInterrupted(out, eventsPath);
        faultPoint("resume-rewrite");
      }
      writeFileAtomic(eventsPath, kept.map((e) => JSON.stringify(e) + "\n").join(""));
      const store = await FileStore.open(join(out, "store"));
      let finished: RunEvent | undefined;
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
      const probeBudget = numberOption("probe-budget", values["probe-budget"], "400");
      if (probeBudget !== undefined && !values["search-probes"])
        throw new Error(
          "--probe-budget sets the budget of --search-probes; add --search-probes, or drop --probe-budget",
        );
      if (values["judge-paraphrases"] && !(values["search-probes"] && values.judge))
        throw new Error(
          "--judge-paraphrases asks the --judge endpoint to reword the probe search's questions: it needs --search-probes and --judge URL (without it the search uses the rule paraphrases)",
        );
      const lessonsPath = values.lessons ?? ".evalrx/lessons.jsonl";
      const lessonFile = lessonsPath === "none" ? undefined : new LessonFile(resolve(lessonsPath));
      const maxTurns = numberOption("max-turns", values["max-turns"], "20");
      const run = values.agentic ? investigateAgentic : investigate;
      const images = async (ref: string) => modelImage(await readImage(ref));
      l4 =
        maxTier === "L4"
          ? cliL4Executor(model, lineage.record?.weights ?? model.spec.source, out, { images, say })
          : undefined;
      if (l4 && "reason" in l4) say(`L4           ${l4.reason}`);
      const { report } = await run({
        ...(values.agentic
          ? {
              agentic: {
                judge: judge ? textJudge(judge) : rulePolicy(),
                sandbox: childSandbox(),
                ...(maxTurns !== undefined ? { maxTurns } : {}),
              },
            }
          : {}),
        store,
        model,
        dataset: { id: basename(dataPath).replace(/\.\w+$/, ""), cases, source: basename(dataPath), fingerprint },
        evaluators: labelEvaluators(cases),
        images,
        decodeImage: rgba,
        protocol: { question },
        ...(l4 && "executor" in l4 ? { l4: l4.executor } : {}),
        runId,
        holdout,
        seed,
        alpha: 0.05,
        maxTier,
        ...(minTier !== "L1" ? { minTier } : {}),
        ...(judge ? { judge } : {}),
        ...(values["search-probes"]
          ? {
              searchProbes: {
                budget: probeBudget ?? 400,
                ...(values["judge-paraphrases"] ? { judgeParaphrases: true } : {}),
              },
            }
          : {}),
        ...(lessonFile
          ? {
              lessons: {
                where: portablePath(lessonFile.path),
                read: () => lessonFile.read(),
                append: (l) => lessonFile.append(l),
              },
            }
          : {}),
        codeVersion: codeVersion(),
        ...(sampled ? { sampled } : {}),
        modelInfo: {
          key: model.spec.key,
          family: model.spec.family,
          source: portablePath(model.spec.source),
          ...(lineage.record ? { weights: portablePath(lineage.record.weights), lineage: lineage.lineage } : {}),
          layers: model.spec.layers,
          heads: model.spec.heads,
          capabilities: [...model.capabilities],
        },
        ...(previous ? { previous } : {}),
        sink: (event) => {
          // Events of the interrupted run are already in the new log; the end of the run waits for its report.
          if (event.seq < kept.length) return;
          if (event.type === "run.finished") {
            finished = event;
            return;
          }
          try {
            appendFileSync(eventsPath, JSON.stringify(event) + "\n");
          } catch (error) {
            throw writeError(error, eventsPath);
          }
          const line = stageLine(event);
          if (line) say(line);
        },
        onLabelCase: everyStep(40, (done, total) => say(`M1 label     ${done}/${total} cases judged`)),
        onProbeCase: everyStep(40, (done, total) => say(`M1 probe     ${done}/${total} cases probed`)),
      });
      await faultPause("report-write", out);
      const paths = writeReportFiles(out, report);
      if (report.repairs?.recipe) {
        // L4 above what runs here: the recipe as a file of its own, to run elsewhere (it says it was not executed).
        writeFileAtomic(join(out, "finetune-recipe.json"), JSON.stringify(report.repairs.recipe, null, 2) + "\n");
        say(`L4 recipe    ${join(out, "finetune-recipe.json")} (written, not executed)`);
      }
      if (l4 && "written" in l4)
        for (const folder of l4.written())
          say(`L4 model     ${folder} (the merged head adapter: an ordinary model folder)`);
      if (l4 && "failures" in l4) for (const why of l4.failures()) say(`L4           ${why}`);
      for (const c of report.repairs?.candidates ?? [])
        if (c.tier === "L4" && c.validated && c.signature)
          say(`L4 promote   evalrx model promote --report ${out} --repair ${c.signature}`);
      faultPoint("report-written");
      // Only now, with the report on disk, is the run marked finished.
      if (finished) {
        appendDurably(eventsPath, JSON.stringify(finished) + "\n");
        const line = stageLine(finished);
        if (line) say(line);
      }
      say(`wrote ${paths.json}, ${eventsPath}, ${paths.html}`);
      if (values.json) console.log(JSON.stringify(report, null, 2));
      return 0;
    } finally {
      if (l4 && "dispose" in l4) await l4.dispose();
      await model?.dispose();
      await folderLock.release();
    }
  },
};
