import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { parseArgs, type ParseArgsConfig } from "node:util";
import {
  loadRun,
  checkRunFile,
  resolveBaseline,
  type JudgeCache,
  type JudgeVerdict,
  type RunView,
} from "../evals/index.ts";
import { deeperThan, MAX_JSON_DEPTH } from "../datasets/row.ts";
import { FileStore } from "../store/files.node.ts";
import { readRegularFile } from "./confined.ts";

/**
 * Parses a JSON file the user named (a config, a run file): its text's
 * `JSON.parse`, refused when nested deeper than `MAX_JSON_DEPTH` levels (which
 * would overflow the stack of whatever reads it next).
 *
 * @example parseJsonText('{"dataset": "pope.jsonl"}') // { dataset: "pope.jsonl" }
 */
export function parseJsonText(text: string): unknown {
  const value: unknown = JSON.parse(text.replace(/^\uFEFF/, ""));
  if (deeperThan(value, MAX_JSON_DEPTH))
    throw new Error(`it is nested deeper than ${MAX_JSON_DEPTH} levels (objects or lists inside each other)`);
  return value;
}

/** The CLI's default store directory. */
export const DEFAULT_STORE = ".evalrx";

/** Parses a command's arguments strictly; an unknown option throws a one-line error naming the known ones. */
export function parseCommandArgs<T extends NonNullable<ParseArgsConfig["options"]>>(
  args: string[],
  options: T,
  usage: string,
) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    const known = Object.keys(options).map((o) => `--${o}`);
    throw new Error(
      `${(error as Error).message.split("\n")[0]}; options are ${known.join(", ")} (usage: ${usage.split("\n")[0]})`,
      {
        cause: error,
      },
    );
  }
}

/** A number from an option, or a one-line error saying what was expected. */
export function numberOption(name: string, value: string | undefined, example: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n))
    throw new Error(`--${name} '${value}' is not a number; e.g. --${name} ${example}`);
  return n;
}

/** `name=value` pairs (repeatable options like `--metric pass=0.03`), numbers checked. */
export function pairsOption(name: string, values: readonly string[] | undefined, example: string) {
  const bare: string[] = [];
  const pairs: Record<string, number> = {};
  for (const v of values ?? []) {
    const i = v.indexOf("=");
    if (i < 0) {
      bare.push(v);
      continue;
    }
    const key = v.slice(0, i);
    const n = numberOption(name, v.slice(i + 1), example);
    if (!key) throw new Error(`--${name} '${v}' names no metric; e.g. --${name} ${example}`);
    pairs[key] = n!;
  }
  return { bare, pairs };
}

/**
 * The gated metrics and their tolerances from `--tolerance T` and repeatable
 * `--metric NAME[=TOL]` (gate and compare read them alike): `--tolerance` is
 * the pass rate's and any bare `--metric`'s; `--metric NAME=TOL` gives NAME its own.
 *
 * @example metricTolerances(0.03, ["yesNo=0.05"]) // { tolerance: { yesNo: 0.05, pass: 0.03 }, metrics: ["yesNo", "pass"] }
 */
export function metricTolerances(
  tolerance: number | undefined,
  metricArgs: readonly string[] | undefined,
): { tolerance?: number | Record<string, number>; metrics: string[] } {
  const { bare, pairs } = pairsOption("metric", metricArgs, "pass=0.03");
  const metrics = [...bare, ...Object.keys(pairs)];
  if (!Object.keys(pairs).length) return { ...(tolerance !== undefined ? { tolerance } : {}), metrics };
  const perMetric: Record<string, number> = { ...pairs };
  for (const m of bare) {
    if (tolerance === undefined)
      throw new Error(`--metric ${m} has no tolerance; write --metric ${m}=0.03 or add --tolerance`);
    perMetric[m] = tolerance;
  }
  if (tolerance !== undefined && !bare.length && perMetric["pass"] === undefined) {
    perMetric["pass"] = tolerance;
    metrics.push("pass");
  }
  return { tolerance: perMetric, metrics };
}

/** The file store a command reads and writes: `--store DIR`, default `.evalrx/`. */
export async function openStore(dir: string | undefined): Promise<FileStore> {
  return FileStore.open(dir ?? DEFAULT_STORE);
}

/**
 * A run named on the command line: a run file exported from the page (a path
 * to a `.json` file), or a run id in the store.
 */
export async function readRun(store: FileStore, ref: string): Promise<RunView> {
  if (existsSync(ref) && statSync(ref).isFile()) {
    const text = new TextDecoder().decode(await readRegularFile(ref, `run file '${ref}'`));
    let json: unknown;
    try {
      json = parseJsonText(text);
    } catch (error) {
      throw new Error(`run file '${ref}' is not JSON: ${(error as Error).message}`, { cause: error });
    }
    const { view } = checkRunFile(json, `run file '${ref}'`);
    if (!view)
      throw new Error(`run file '${ref}' holds a run that is not an eval; gate, compare and calibrate read eval runs`);
    return view;
  }
  if (!(await store.getRun(ref)))
    throw new Error(`unknown run '${ref}': no such run in the store at ${store.root}/ and no such run file`);
  return loadRun(store, ref);
}

/** The baseline a gate names, read from a run file, the store, or `latest`. */
export async function readBaseline(store: FileStore, run: RunView, ref: string): Promise<RunView> {
  return ref === "latest" ? resolveBaseline(store, run, "latest") : readRun(store, ref);
}

export const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/**
 * Judge verdicts kept in a JSONL file (one `{ key, passed, reason }` per line),
 * so a re-run of the same outputs under the same judge and rubric asks nothing.
 * A torn last line (a crash mid-append) is skipped.
 */
export function fileJudgeCache(path: string): JudgeCache {
  const map = new Map<string, JudgeVerdict>();
  if (existsSync(path))
    for (const line of readFileSync(path, "utf8").split("\n")) {
      try {
        const { key, passed, reason } = JSON.parse(line) as { key: string; passed: boolean; reason: string };
        if (typeof key === "string" && typeof passed === "boolean")
          map.set(key, { passed, reason: String(reason ?? "") });
      } catch {
        // a torn or empty line
      }
    }
  return {
    get: (key) => map.get(key),
    set: (key, verdict) => {
      map.set(key, verdict);
      mkdirSync(dirname(path), { recursive: true });
      appendFileSync(path, JSON.stringify({ key, ...verdict }) + "\n");
    },
  };
}
