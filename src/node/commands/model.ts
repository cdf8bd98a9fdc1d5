import { existsSync, readFileSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { parseEventLines } from "../../agent/events.ts";
import {
  lineageChain,
  loadPromoted,
  promote,
  type LineageRecord,
  type LineageStep,
} from "../../agent/lineage/index.ts";
import { LineageFile } from "../../agent/lineage/lineage-file.node.ts";
import type { DecodeImage } from "../../agent/repair.ts";
import type { Model } from "../../core/index.ts";
import { isCapability, type Capability } from "../../core/capability.ts";
import { DEFAULT_HUB, hubBase, isHubId, normalizeHub } from "../../models/hub.ts";
import { hubFileList, httpFiles } from "../../models/http-files.ts";
import { formatInspection, inspectModel, inspectOnnxFile, type ModelInspection } from "../../models/inspect.ts";
import { DTYPE_SUFFIXES } from "../../models/layout.ts";
import { nodeFiles } from "../../models/ort-session.node.ts";
import { getSpec } from "../../models/specs/index.ts";
import { loadModel, REPO_ROOT } from "../../models/load.node.ts";
import { parseReport } from "../../report/schema.ts";
import type { Command } from "../cli.ts";
import { parseCommandArgs } from "../eval-runs.ts";

const usage = `evalrx model inspect <PATH|HUB_ID> [--json] [--dtype DTYPE] [--want CAPS] [--hub URL]
       evalrx model promote --report DIR --repair SIGNATURE [--name ID] [--weights FOLDER] [--lineage FILE] [--json]
       evalrx model lineage [ID] [--lineage FILE] [--json]

  What a model is and what the white-box runtime can read from it, decided from its config files and ONNX
  protobufs (no session is created, no weight loaded): the spec (registered or inferred), the files, the
  capabilities, and the attention status — how many attention tensors a forward returns against the layers
  the config declares, where each was found (main graph, If branch, function), which fused ops were met and
  whether they were decomposed, and what to do when attention cannot be read.
  PATH      a model folder (config.json, tokenizer.json, onnx/*.onnx), a single .onnx file, or a bundled key
  HUB_ID    owner/name on the hub: the config files and the graphs the layout needs are downloaded
  --json    print one JSON object (capabilities, attention.found, attention.layers, files, …)
  --dtype   the variant to inspect: ${Object.keys(DTYPE_SUFFIXES).join(", ")} (default fp32, else what is there)
  --want    capabilities that must be there, comma-separated (exit 1 when one is missing, with the reason)
  --hub     the hub's address (default https://huggingface.co; a mirror works the same)

  promote   makes the repair an investigation validated (M5: paired test against the unmodified baseline, e-value,
            yes-bias control) a model of its own, recorded with its parent, the repair, that evidence and the
            dataset version; refused, with the reason, for a repair M5 did not validate. A prompt, scaffold or
            intervention repair keeps the parent's weights and is applied around them by every backend; an L4
            repair runs the folder of its merged model (--weights; default: the folder the investigation's L4
            executor wrote, as its events.jsonl says). Then: evalrx investigate --model ID
  --report  the investigation's --out folder (or its report.json)
  --repair  the candidate's signature as the report lists it (e.g. rewrite:context, attention-bias:image:2)
  --name    the promoted model's id (default <parent>+<signature>)
  --lineage the lineage file (default .evalrx/lineage.jsonl)
  lineage   the chain of promotions behind ID (or every promoted model), each step with its verified delta`;

/** The lineage file the CLI reads and writes (`--lineage`, default `.evalrx/lineage.jsonl`). */
export function lineageFile(path?: string): LineageFile {
  return new LineageFile(resolve(path ?? ".evalrx/lineage.jsonl"));
}

/**
 * A model by name: a promoted model of the lineage file (its weights loaded on onnxruntime-node, its repairs
 * wrapped around them) with the chain that made it, or a bundled key / folder as `loadModel` takes it.
 */
export async function loadNamedModel(
  name: string,
  o: { readonly lineage?: string; readonly decodeImage?: DecodeImage; readonly memo?: boolean } = {},
): Promise<{ model: Model; record?: LineageRecord; lineage?: LineageStep[] }> {
  const file = lineageFile(o.lineage);
  const { records } = await file.read();
  const record = records.find((r) => r.id === name);
  const load = (weights: string) => loadModel(weights, o.memo ? { memo: true } : {});
  if (!record) return { model: await load(name) };
  const model = await loadPromoted(record, load, o.decodeImage ? { decodeImage: o.decodeImage } : {});
  return { model, record, lineage: lineageChain(records, name) };
}

function reportPath(value: string): string {
  const path = resolve(value);
  if (existsSync(path) && statSync(path).isDirectory()) return join(path, "report.json");
  return path;
}

function stepLine(s: LineageStep): string {
  const pp = (x: number) => `${x > 0 ? "+" : ""}${(100 * x).toFixed(1)}pp`;
  return `${s.parent} → ${s.id}  ${s.tier} ${s.repair}: failures ${pp(s.delta)} (fixed ${s.fixed}, broke ${s.broken} of ${s.n}; p = ${s.p.toPrecision(3)}, e = ${s.e.toPrecision(3)}; run ${s.runId}, data ${s.dataset})`;
}

/**
 * Where an L4 repair's merged model was written, as the investigation's event log says (its `training.weights`
 * beside the repair's test); undefined for other repairs or when the log does not say.
 */
export function trainedWeights(reportFile: string, signature: string): string | undefined {
  const events = join(dirname(reportFile), "events.jsonl");
  if (!existsSync(events)) return undefined;
  const tested = parseEventLines(readFileSync(events, "utf8")).find(
    (e) => e.type === "repair.tested" && e.payload["signature"] === signature && e.payload["tier"] === "L4",
  );
  const training = tested?.payload["training"] as { weights?: unknown } | undefined;
  return typeof training?.weights === "string" ? training.weights : undefined;
}

async function promoteCommand(values: Record<string, string | boolean | undefined>): Promise<number> {
  const report = typeof values.report === "string" ? values.report : undefined;
  const repair = typeof values.repair === "string" ? values.repair : undefined;
  if (!report || !repair)
    throw new Error("evalrx model promote needs --report <investigation folder> and --repair <signature>");
  const path = reportPath(report);
  if (!existsSync(path))
    throw new Error(
      `--report ${report}: ${path} does not exist; give an investigation's --out folder (it holds report.json)`,
    );
  const parsed = (() => {
    try {
      return parseReport(readFileSync(path, "utf8"));
    } catch (error) {
      throw new Error(`--report ${path}: ${(error as Error).message}`, { cause: error });
    }
  })();
  const file = lineageFile(values.lineage as string | undefined);
  const { records } = await file.read();
  const key = parsed.provenance.model?.["key"];
  const parent = records.find((r) => r.id === key);
  const weights = typeof values.weights === "string" ? resolve(values.weights) : trainedWeights(path, repair);
  if (weights && !existsSync(join(weights, "config.json")))
    throw new Error(`--weights ${values.weights as string}: not a model folder (no config.json)`);
  let parentWeights: string | undefined;
  if (!parent && typeof key === "string" && !getSpec(key)) {
    // A folder model: its weights are where the investigation loaded them from.
    const source = String(parsed.provenance.model?.["source"] ?? key);
    parentWeights = [key, source].map((p) => resolve(p)).find((p) => existsSync(p));
    if (!parentWeights)
      throw new Error(`--report ${path}: the model '${key}' it ran is neither bundled nor a folder here (${source})`);
  }
  const record = promote(parsed, repair, {
    ...(parent ? { parent } : {}),
    ...(parentWeights ? { parentWeights } : {}),
    ...(weights ? { weights } : {}),
    ...(typeof values.name === "string" ? { id: values.name } : {}),
  });
  await file.add(record);
  const chain = lineageChain([...records, record], record.id);
  if (values.json) console.log(JSON.stringify({ record, lineage: chain }, null, 2));
  else {
    console.log(`promoted ${record.id} (recorded in ${file.path})`);
    for (const s of chain) console.log(`  ${stepLine(s)}`);
    console.log(`next: evalrx investigate --model ${record.id}`);
  }
  return 0;
}

async function lineageCommand(id: string | undefined, values: Record<string, string | boolean | undefined>) {
  const file = lineageFile(values.lineage as string | undefined);
  const { records, problems } = await file.read();
  for (const p of problems) console.error(p);
  if (id && !records.some((r) => r.id === id))
    throw new Error(
      `no promoted model '${id}' in ${file.path}; promoted: ${records.map((r) => r.id).join(", ") || "none"}`,
    );
  const ids = id ? [id] : records.filter((r) => !records.some((c) => c.parent === r.id)).map((r) => r.id);
  const chains = ids.map((i) => ({ id: i, lineage: lineageChain(records, i) }));
  if (values.json) console.log(JSON.stringify(chains, null, 2));
  else if (!chains.length) console.log(`no promoted model in ${file.path}`);
  else for (const c of chains) console.log([c.id, ...c.lineage.map((s) => `  ${stepLine(s)}`)].join("\n"));
  return 0;
}

const options = {
  json: { type: "boolean" },
  report: { type: "string" },
  repair: { type: "string" },
  name: { type: "string" },
  weights: { type: "string" },
  lineage: { type: "string" },
  dtype: { type: "string" },
  want: { type: "string" },
  hub: { type: "string" },
} as const;

/** Inspects what `target` names: a bundled key, a folder, one .onnx file, or a hub id. */
export async function inspectTarget(
  target: string,
  o: { readonly dtype?: string; readonly hub?: string; readonly fetch?: typeof fetch } = {},
): Promise<ModelInspection> {
  const dtype = o.dtype ? { dtype: o.dtype } : {};
  const bundled = getSpec(target);
  if (bundled) {
    const folder = resolve(REPO_ROOT, bundled.source);
    return inspectModel(nodeFiles(folder), { key: bundled.key, source: bundled.source, spec: bundled, ...dtype });
  }
  if (existsSync(target)) {
    const path = resolve(target);
    if (statSync(path).isDirectory()) return inspectModel(nodeFiles(path), { key: target, source: path, ...dtype });
    if (!path.endsWith(".onnx"))
      throw new Error(`'${target}' is a file but not an .onnx graph: give a model folder, an .onnx file or a hub id`);
    return inspectOnnxFile(new Uint8Array(await readFile(path)), target);
  }
  if (!isHubId(target))
    throw new Error(
      `'${target}' is neither a bundled model, an existing folder or .onnx file, nor a hub id (owner/name)`,
    );
  const hub = normalizeHub(o.hub ?? DEFAULT_HUB);
  const fetchOptions = o.fetch ? { fetch: o.fetch } : {};
  const list = await hubFileList(hub, target, fetchOptions);
  const base = hubBase(hub, target);
  return inspectModel(httpFiles(base, { ...fetchOptions, list: async () => list }), {
    key: target,
    source: base,
    ...dtype,
  });
}

function parseWant(value: string | undefined): Capability[] {
  if (!value) return [];
  const wanted = value
    .split(",")
    .map((c) => c.trim())
    .filter(Boolean);
  for (const c of wanted)
    if (!isCapability(c))
      throw new Error(
        `--want names '${c}', which is not a capability; capabilities are generate, logits, attention, hidden_states, attention_write, image`,
      );
  return wanted as Capability[];
}

export const command: Command = {
  summary:
    "what a model's files hold and what attention can be read from them, before loading; promote a validated repair into a model, and show its lineage",
  usage,
  async run(args) {
    const { values, positionals } = parseCommandArgs(args, options, usage);
    const [sub, target, ...extra] = positionals;
    if (sub === "promote") {
      if (target) throw new Error(`unexpected argument '${target}'; promote takes --report and --repair`);
      return promoteCommand(values);
    }
    if (sub === "lineage") {
      if (extra.length) throw new Error(`unexpected argument '${extra[0]}'`);
      return lineageCommand(target, values);
    }
    if (sub !== "inspect")
      throw new Error(`expected 'evalrx model inspect <PATH|HUB_ID>' (or promote, lineage), got '${sub ?? ""}'`);
    if (!target) throw new Error("evalrx model inspect needs a model folder, an .onnx file or a hub id");
    if (extra.length) throw new Error(`unexpected argument '${extra[0]}'`);
    const want = parseWant(values.want);
    const report = await inspectTarget(target, {
      ...(values.dtype ? { dtype: values.dtype } : {}),
      ...(values.hub ? { hub: values.hub } : {}),
    });
    const missing = want.filter((c) => !report.capabilities.includes(c));
    if (values.json)
      console.log(JSON.stringify(missing.length ? { ...report, missing_capabilities: missing } : report, null, 2));
    else {
      console.log(formatInspection(report));
      if (missing.length) console.log(`missing: ${missing.join(", ")} (asked with --want)`);
    }
    return missing.length ? 1 : 0;
  },
};
