import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, extname, join, resolve } from "node:path";
import type { FailureCase, ImagePixels } from "../../core/index.ts";
import {
  caseHash,
  datasetVersion,
  decodeDataUrl,
  importDataset,
  select,
  type ImportedCase,
  type ImportFormat,
} from "../../datasets/index.ts";
import {
  buildEvaluators,
  formatSummary,
  gate,
  judgeFromSpec,
  parseEvalConfig,
  runEval,
  validateGate,
  PASS_METRIC,
  type RunView,
} from "../../evals/index.ts";
import { getSpec } from "../../models/specs/index.ts";
import type { FileStore } from "../../store/files.node.ts";
import type { Command } from "../cli.ts";
import { confinedReader, modelImage, portablePath, readRegularFile } from "../confined.ts";
import {
  DEFAULT_STORE,
  fileJudgeCache,
  openStore,
  parseCommandArgs,
  parseJsonText,
  readBaseline,
} from "../eval-runs.ts";
import { formatGate } from "./gate.ts";
import { codeVersion } from "./version.ts";

const usage = `evalrx eval <config.json> [--store DIR] [--resume RUN] [--json]

  config.json: { "name": "pope-yesno", "dataset": "public/demo/pope.jsonl", "select": { "sample": 100 },
                 "model": "tiny-vlm", "evaluators": ["yesNo"], "repeats": 3, "cluster": true,
                 "generation": { "temperature": 0.7, "maxNewTokens": 3 },
                 "gate": { "threshold": 0.6, "baseline": "latest", "tolerance": 0.05 } }
  Paths are relative to the config file. Judges ({ "type": "judge", "baseUrl", "model", "rubric" }) read their
  API key from EVALRX_JUDGE_KEY. Writes the run to the store (default .evalrx/), prints its summary, and with a
  gate exits with the gate's code (0 pass, 1 fail, 2 inconclusive under strict, 3 error).`;

function sha12(file: string): string {
  return createHash("sha256").update(readFileSync(file)).digest("hex").slice(0, 12);
}

/**
 * Stores the imported cases as the dataset `baseId`, never replacing other
 * cases stored under that id: the same cases are already there (nothing is
 * written); other cases go in beside them as `<baseId>@<version>`, with a
 * note. Returns the id the run reads.
 */
async function storeDatasetVersion(
  store: FileStore,
  baseId: string,
  source: string,
  imported: { readonly cases: readonly ImportedCase[]; readonly format: ImportFormat },
): Promise<string> {
  const version = datasetVersion(imported.cases);
  const existing = await store.getDataset(baseId);
  const id = existing && existing.version !== version ? `${baseId}@${version}` : baseId;
  if (id !== baseId)
    console.error(
      `note: the store's dataset '${baseId}' holds other cases (version ${existing!.version}, ${existing!.caseCount} cases); ` +
        `this file's ${imported.cases.length} cases (version ${version}) are stored beside them as '${id}', and the stored cases stay`,
    );
  if ((await store.getDataset(id))?.version === version) return id;
  const stamp = new Date().toISOString();
  await store.putDataset(
    {
      id,
      name: baseId,
      version,
      source,
      format: imported.format,
      caseCount: imported.cases.length,
      createdAt: stamp,
      updatedAt: stamp,
    },
    imported.cases.map((c) => ({ ...c, datasetId: id, hash: caseHash(c) })),
  );
  return id;
}

export const command: Command = {
  summary: "run an eval (dataset × model × evaluators × repeats) into the store and print its summary",
  usage,
  async run(args) {
    const { values, positionals } = parseCommandArgs(
      args,
      { store: { type: "string" }, resume: { type: "string" }, json: { type: "boolean" } },
      usage,
    );
    if (positionals.length !== 1) throw new Error(`expected one config file, got ${positionals.length}`);
    const configPath = resolve(positionals[0]!);
    const configText = new TextDecoder().decode(await readRegularFile(configPath, `config '${positionals[0]}'`));
    let json: unknown;
    try {
      json = parseJsonText(configText);
    } catch (error) {
      throw new Error(`config '${positionals[0]}' is not JSON: ${(error as Error).message}`, { cause: error });
    }
    const config = parseEvalConfig(json);
    const here = dirname(configPath);
    const storeDir = values.store ?? DEFAULT_STORE;
    const evaluators = buildEvaluators(
      config.evaluators,
      (spec) => judgeFromSpec(spec, process.env["EVALRX_JUDGE_KEY"] ? { apiKey: process.env["EVALRX_JUDGE_KEY"] } : {}),
      fileJudgeCache(join(storeDir, "judge-cache.jsonl")),
    );
    const metrics = [PASS_METRIC, ...evaluators.map((e) => e.name)];
    const gateSpec = config.gate ? validateGate(config.gate, metrics) : undefined;

    // The dataset: every valid row goes to the store; the selection is what runs.
    const datasetPath = resolve(here, config.dataset);
    if (!existsSync(datasetPath)) throw new Error(`dataset '${config.dataset}' not found (looked at ${datasetPath})`);
    const imported = await importDataset(await readRegularFile(datasetPath, `dataset '${config.dataset}'`), {
      name: basename(datasetPath),
    });
    for (const p of imported.problems.slice(0, 5))
      console.error(`${config.dataset}:${p.line}: ${p.reason} (row skipped)`);
    if (imported.problems.length > 5) console.error(`… and ${imported.problems.length - 5} more problem(s)`);
    if (imported.cases.length === 0) throw new Error(`dataset '${config.dataset}' has no valid case`);
    const baseId = basename(datasetPath, extname(datasetPath));
    const store = await openStore(storeDir);
    // A run being resumed is locked before anything is loaded: a second writer is refused at once.
    const lock = values.resume !== undefined ? await store.lockRun(values.resume) : undefined;
    try {
      const datasetId = await storeDatasetVersion(store, baseId, portablePath(datasetPath), imported);
      const cases: FailureCase[] = select(
        imported.cases.filter((c) => c.status === "active"),
        config.select ?? {},
      );
      const readImage = confinedReader(dirname(datasetPath));
      const images = async (ref: string, row: FailureCase): Promise<Uint8Array | ImagePixels> => {
        try {
          if (ref.startsWith("data:")) {
            const decoded = decodeDataUrl(ref);
            if (!(decoded instanceof Uint8Array)) throw new Error(`image data URL: ${decoded.reason}`);
            return decoded;
          }
          if (ref.startsWith("sha256:")) {
            const stored = await store.getImage(ref);
            if (!stored) throw new Error(`image ${ref} is not in the store`);
            return stored.bytes;
          }
          return modelImage(await readImage(ref));
        } catch (error) {
          // The trial errors with the case and the reason; the run goes on.
          throw new Error(`case '${row.id}': ${(error as Error).message}`, { cause: error });
        }
      };

      // The model, and its identity for the fingerprint.
      const modelRef = getSpec(config.model) ? config.model : resolve(here, config.model);
      // Loaded here, not at the top, so `evalrx --help` does not start the model runtime.
      const { loadModel, REPO_ROOT } = await import("../../models/load.node.ts");
      const model = await loadModel(modelRef);
      const folder = getSpec(config.model) ? resolve(REPO_ROOT, model.spec.source) : modelRef;
      const files = Object.fromEntries(
        model.spec.files.filter((f) => existsSync(resolve(folder, f))).map((f) => [f, sha12(resolve(folder, f))]),
      );

      const controller = new AbortController();
      const stop = () => controller.abort();
      process.once("SIGINT", stop);
      let last = -1;
      try {
        const { run, summary } = await runEval({
          store,
          dataset: { id: datasetId, cases },
          model,
          evaluators,
          ...(config.repeats !== undefined ? { repeats: config.repeats } : {}),
          ...(config.cluster !== undefined ? { cluster: config.cluster } : {}),
          ...(config.variant !== undefined ? { variant: config.variant } : {}),
          ...(config.concurrency !== undefined ? { concurrency: config.concurrency } : {}),
          ...(config.generation ? { generation: config.generation } : {}),
          // The eval's identity stays the file's name when a new version of its cases is stored beside the old.
          evalKey: config.name ?? `${baseId}:${evaluators.map((e) => e.name).join("+")}`,
          ...(values.resume !== undefined ? { resume: values.resume } : {}),
          ...(lock ? { lock } : {}),
          images,
          modelIdentity: { key: model.spec.key, files },
          codeVersion: codeVersion(),
          extraConfig: { configFile: portablePath(configPath), select: config.select ?? {} },
          signal: controller.signal,
          onProgress: (p) => {
            const tenth = Math.floor((10 * p.done) / p.total);
            if (tenth !== last && process.stderr.isTTY) process.stderr.write(`\r${p.done}/${p.total} judged`);
            last = tenth;
          },
        });
        if (process.stderr.isTTY) process.stderr.write("\n");
        if (run.status === "cancelled") {
          console.error(
            `cancelled after ${summary.trials} trial(s); continue with: evalrx eval ${positionals[0]} --resume ${run.id}`,
          );
          return 3;
        }
        let gateResult;
        if (gateSpec) {
          let baseline: RunView | undefined;
          let spec = gateSpec;
          if (gateSpec.baseline !== undefined) {
            try {
              baseline = await readBaseline(store, run, gateSpec.baseline);
            } catch (error) {
              if (gateSpec.baseline !== "latest") throw error;
              // The first run of an eval has no 'latest' to compare with: gate it on the rest.
              console.error(`warning: ${(error as Error).message}; gating without a baseline`);
              spec = { ...gateSpec, baseline: undefined, tolerance: undefined };
            }
          }
          gateResult = gate(run, spec, baseline);
        }
        if (values.json) console.log(JSON.stringify({ run: run.id, summary, gate: gateResult }, null, 2));
        else console.log([formatSummary(summary), ...(gateResult ? ["", formatGate(gateResult)] : [])].join("\n"));
        return gateResult?.exitCode ?? 0;
      } finally {
        process.off("SIGINT", stop);
        await model.dispose();
      }
    } finally {
      await lock?.release();
    }
  },
};
