import { isImageModel } from "../../../models/specs/index.ts";

/**
 * Where the model folder is in what was dropped or picked: the folder that
 * holds the shallowest `config.json` (a dropped parent folder, or the
 * picker's own top folder, is looked through). Paths come back relative to
 * it; files outside it are left out. Without any `config.json` the common
 * top folder (if any) is the root, so the problems can name what is missing.
 *
 * @example
 * modelFolder([{ path: "tiny-lm/config.json" }, { path: "tiny-lm/onnx/model.onnx" }])
 * // → { name: "tiny-lm", files: [{ path: "config.json" }, { path: "onnx/model.onnx" }], outside: 0 }
 */
export function modelFolder<T extends { readonly path: string }>(
  dropped: readonly T[],
): { name: string; files: (T & { path: string })[]; outside: number } {
  const configs = dropped.map((d) => d.path).filter((p) => p === "config.json" || p.endsWith("/config.json"));
  configs.sort((a, b) => a.split("/").length - b.split("/").length || a.localeCompare(b));
  let dir: string;
  if (configs.length) dir = configs[0]!.slice(0, -"config.json".length);
  else {
    const tops = new Set(dropped.map((d) => (d.path.includes("/") ? d.path.split("/")[0]! : "")));
    dir = tops.size === 1 && !tops.has("") ? `${[...tops][0]}/` : "";
  }
  const name = dir.replace(/\/$/, "").split("/").pop() || "model";
  const files = dropped.filter((d) => d.path.startsWith(dir)).map((d) => ({ ...d, path: d.path.slice(dir.length) }));
  return { name, files, outside: dropped.length - files.length };
}

/**
 * What keeps a folder from being a model folder, found from its file list
 * and config.json alone, one sentence per problem, each naming the file:
 * config.json missing or unreadable, tokenizer files missing, no ONNX graph
 * under `onnx/` (with a hint when graphs sit at the top). Empty when it looks
 * like a model folder; the worker's inspection then names any graph the
 * layout needs that is missing or unreadable.
 *
 * @example
 * folderProblems(["config.json"], '{"model_type":"llama"}')
 * // → ["tokenizer.json is missing", "tokenizer_config.json is missing", "no ONNX graph in onnx/ (expected e.g. onnx/model.onnx)"]
 */
export function folderProblems(paths: readonly string[], configText: string | undefined): string[] {
  const have = new Set(paths);
  if (configText === undefined)
    return [
      `config.json is missing: a model folder holds config.json, tokenizer.json, tokenizer_config.json and onnx/*.onnx${paths.length ? ` (found ${preview(paths)})` : ""}`,
    ];
  let config: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(configText);
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not a JSON object");
    config = parsed as Record<string, unknown>;
  } catch (error) {
    return [`config.json is not valid JSON (${(error as Error).message})`];
  }
  const problems: string[] = [];
  if (typeof config.model_type !== "string") problems.push("config.json has no 'model_type' string");
  const required = [
    "tokenizer.json",
    "tokenizer_config.json",
    ...(isImageModel(config) ? ["preprocessor_config.json"] : []),
  ];
  for (const path of required) if (!have.has(path)) problems.push(`${path} is missing`);
  if (!paths.some((p) => p.startsWith("onnx/") && p.endsWith(".onnx"))) {
    const top = paths.filter((p) => !p.includes("/") && p.endsWith(".onnx"));
    problems.push(
      top.length
        ? `no ONNX graph in onnx/ (${preview(top)} ${top.length === 1 ? "is" : "are"} at the top of the folder: keep the onnx/ folder, e.g. drop the whole model folder)`
        : "no ONNX graph in onnx/ (expected e.g. onnx/model.onnx)",
    );
  }
  return problems;
}

function preview(paths: readonly string[]): string {
  const shown = paths.slice(0, 4).join(", ");
  return paths.length > 4 ? `${shown} and ${paths.length - 4} more` : shown;
}

/**
 * What an inspection says keeps a folder from loading on the white-box
 * runtime: graphs its layout needs that are missing (with the names tried),
 * or why the runtime cannot run it.
 *
 * @example
 * inspectionProblems({ missing: [{ role: "decoder", tried: ["onnx/model.onnx"] }], runtime: { runs: true } })
 * // → ["no decoder graph: looked for onnx/model.onnx"]
 */
export function inspectionProblems(inspection: {
  readonly missing: readonly { readonly role: string; readonly tried: readonly string[] }[];
  readonly runtime: { readonly runs: boolean; readonly reason?: string };
}): string[] {
  const problems = inspection.missing.map(
    (m) => `no ${m.role.replace(/_/g, " ")} graph: looked for ${m.tried.join(", ")}`,
  );
  if (!inspection.runtime.runs)
    problems.push(inspection.runtime.reason ?? "the white-box runtime cannot run this model");
  return problems;
}
