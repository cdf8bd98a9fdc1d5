import { existsSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { isCapability, type Capability } from "../../core/capability.ts";
import { DEFAULT_HUB, hubBase, isHubId, normalizeHub } from "../../models/hub.ts";
import { hubFileList, httpFiles } from "../../models/http-files.ts";
import { formatInspection, inspectModel, inspectOnnxFile, type ModelInspection } from "../../models/inspect.ts";
import { DTYPE_SUFFIXES } from "../../models/layout.ts";
import { nodeFiles } from "../../models/ort-session.node.ts";
import { getSpec } from "../../models/specs/index.ts";
import { REPO_ROOT } from "../../models/load.node.ts";
import type { Command } from "../cli.ts";
import { parseCommandArgs } from "../eval-runs.ts";

const usage = `evalrx model inspect <PATH|HUB_ID> [--json] [--dtype DTYPE] [--want CAPS] [--hub URL]

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
  --hub     the hub's address (default https://huggingface.co; a mirror works the same)`;

const options = {
  json: { type: "boolean" },
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
  summary: "what a model's files hold and what attention can be read from them, before loading",
  usage,
  async run(args) {
    const { values, positionals } = parseCommandArgs(args, options, usage);
    const [sub, target, ...extra] = positionals;
    if (sub !== "inspect") throw new Error(`expected 'evalrx model inspect <PATH|HUB_ID>', got '${sub ?? ""}'`);
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
