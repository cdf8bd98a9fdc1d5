import type { FailureCase, ImagePixels, Model, ModelInput, Progress } from "../core/index.ts";
import { taskYielder } from "../core/next-task.ts";
import { caseHash, datasetVersion } from "../datasets/identity.ts";
import { sha256Hex } from "../datasets/hash.ts";
import type { ItemRecord, RunLock, RunRecord, Store } from "../store/types.ts";
import { runChecks } from "./evaluator.ts";
import { imageUses, plannedImages } from "./planned-images.ts";
import { fingerprintHash, type Fingerprint } from "./fingerprint.ts";
import { evalConfig, runView, toItemCheck, type EvalRunConfig, type RunCaseInfo, type RunView } from "./run-view.ts";
import { summarize, type EvalSummary } from "./summary.ts";
import type { Evaluator } from "./types.ts";

/** Generation settings of an eval (the model's `GenerateOptions` that belong in a fingerprint). */
export interface GenerationSettings {
  /** 0 is greedy; above 0 samples (then repeats differ). */
  readonly temperature?: number;
  readonly maxNewTokens?: number;
  readonly topK?: number;
  /**
   * Base seed; each trial's seed is derived from it, the case id and the repeat. Without it the run id is the base:
   * runs are independent draws, and a resumed run still draws what it would have.
   */
  readonly seed?: number;
  readonly stop?: readonly string[];
}

export interface RunEvalOptions {
  readonly store: Store;
  /** The cases (already selected) and the id of the dataset they come from. */
  readonly dataset: { readonly id: string; readonly cases: readonly FailureCase[] };
  readonly model: Model;
  readonly evaluators: readonly Evaluator[];
  readonly repeats?: number;
  /** The case field that groups cases: `true` or `"cluster"` for the case's cluster, `"split"`, or `"meta.<key>"`. */
  readonly cluster?: string | boolean;
  /** A label for what is varied on purpose (a prompt variant, a repair). */
  readonly variant?: string;
  readonly concurrency?: number;
  readonly signal?: AbortSignal;
  readonly generation?: GenerationSettings;
  /** Which eval this is (runs of one eval are baselines of each other); default `<dataset id>:<evaluator names>`. */
  readonly evalKey?: string;
  /** The new run's id (default: derived from the eval and the start time). */
  readonly runId?: string;
  /** Continue this interrupted run instead of starting one: its plan must be the same. */
  readonly resume?: string;
  /**
   * The run's writer lock, when the caller already holds it (e.g. the page,
   * which locks a run for as long as it shows it running); a new run then
   * takes the lock's run id. Without it runEval takes the lock itself
   * (`store.lockRun`) for the run's whole life and lets go at the end, so a
   * run another writer holds is refused up front, before anything is judged.
   */
  readonly lock?: RunLock;
  /** Reads a case's image reference (a path relative to the dataset, a data URL, a `sha256:` key). */
  readonly images?: (ref: string, row: FailureCase) => Promise<Uint8Array | ImagePixels>;
  /** The model's identity for the fingerprint (files' hashes); default its spec key. */
  readonly modelIdentity?: Fingerprint["model"];
  readonly codeVersion?: string;
  readonly evalrxVersion?: string;
  readonly onProgress?: (progress: Progress) => void;
  /**
   * Given, runEval returns as soon as every item is stored, and recording the run's end — its summary event, then
   * its finished (or cancelled) status — and letting go of its writer lock go on behind: `closeBehind` gets the
   * promise of that, which settles once it is done and rejects with the store's error. The caller waits for it
   * before it counts the run as finished in the store. A loop of runs (an investigation's repair candidates) judges
   * the next run meanwhile: in the page each end was three round trips the model worker sat idle through.
   */
  readonly closeBehind?: (closed: Promise<void>) => void;
  /** Extra fields kept in the run's config (e.g. the eval config file it came from). */
  readonly extraConfig?: Readonly<Record<string, unknown>>;
  /** The clock (tests); default `new Date()`. */
  readonly now?: () => Date;
}

export interface EvalRunResult {
  readonly run: RunView;
  readonly summary: EvalSummary;
  /** The run's items in index order, as stored (those a resumed run read back included). */
  readonly items: readonly ItemRecord[];
}

/** The most judged items one store write takes (and the most judging runs ahead of the writes). */
const MAX_WRITE_BATCH = 256;

/** The longest the judging runs before it lets the thread's queued tasks in (store callbacks, messages). */
const JUDGING_SLICE_MS = 25;

/** The most trials (cases × repeats) one run may plan: its plan and items are held in memory. */
export const MAX_TRIALS = 5_000_000;

/** The cluster fields these cases could use, for a message. */
function clusterChoices(cases: readonly FailureCase[]): string {
  const fields = new Set<string>();
  for (const c of cases.slice(0, 1000)) {
    if (c.cluster !== undefined) fields.add("cluster");
    if (c.split !== undefined) fields.add("split");
    for (const k of Object.keys(c.meta)) fields.add(`meta.${k}`);
  }
  fields.add("id");
  return [...fields]
    .slice(0, 12)
    .map((f) => `'${f}'`)
    .join(", ");
}

function clusterFieldOf(option: string | boolean | undefined): string | undefined {
  if (option === undefined || option === false) return undefined;
  return option === true ? "cluster" : option;
}

function clusterValue(row: FailureCase, field: string): string | undefined {
  let v: unknown;
  if (field === "cluster") v = row.cluster;
  else if (field === "split") v = row.split;
  else if (field === "id") v = row.id;
  else if (field.startsWith("meta.")) v = row.meta[field.slice(5)];
  else throw new Error(`runEval(): cluster field '${field}' is not one of 'cluster', 'split', 'id' or 'meta.<key>'`);
  return v === undefined || v === null ? undefined : String(v);
}

/**
 * A 32-bit seed for one trial, stable across machines and resumes. With a
 * declared base seed every run draws the same samples (reproducible); without
 * one the base is the run id, so two runs of one eval are independent draws
 * (what an A/A calibration needs) and a resumed run still draws what it would have.
 *
 * @example trialSeed("run:pope-20261130T101500Z", "pope-random-0001", 2) // a fixed 32-bit integer
 */
export function trialSeed(base: number | string, caseId: string, repeat: number): number {
  return hashSeed(base, caseId, repeat);
}

/**
 * A 32-bit seed named by its parts, the same on every machine: the first 32
 * bits of sha256 over the parts joined by NUL (so `("a", "bc")` ≠ `("ab", "c")`).
 *
 * @example hashSeed("calibrate", "run-1", "run-2", 3) // a fixed 32-bit integer
 */
export function hashSeed(...parts: (string | number)[]): number {
  return parseInt(sha256Hex(parts.join("\u0000")).slice(0, 8), 16) | 0;
}

function stamp(d: Date): string {
  return d
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
}

/**
 * Runs an eval: every case × repeat is generated by the model and judged by
 * every evaluator, and the judged items are written to the store as it goes,
 * behind the judging (the items judged while a write is in flight go into the
 * next one, with the run's progress marker in the same write), so an
 * interrupted run resumes from the first unjudged item (`resume: runId`) and
 * judges each exactly once. Reports progress; an aborted `signal` stops it cleanly (status
 * `cancelled`, what was judged kept). A model error on a trial is recorded as
 * that trial's error; a throwing evaluator errors only its own check.
 *
 * @example const { run, summary } = await runEval({ store, dataset: { id: "pope", cases }, model, evaluators: [yesNo()], repeats: 3, cluster: true, generation: { temperature: 0.7, maxNewTokens: 3 } })
 */
export async function runEval(options: RunEvalOptions): Promise<EvalRunResult> {
  const { store, dataset, model, evaluators } = options;
  const repeats = options.repeats ?? 1;
  if (!Number.isInteger(repeats) || repeats < 1)
    throw new RangeError(`runEval(): repeats ${repeats} must be a positive integer`);
  const concurrency = options.concurrency ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new RangeError(`runEval(): concurrency ${concurrency} must be a positive integer`);
  if (evaluators.length === 0) throw new Error("runEval(): no evaluators; give at least one, e.g. [yesNo()]");
  const names = evaluators.map((e) => e.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) throw new Error(`runEval(): two evaluators are named '${dup}'; give one a name: option`);
  const cases = dataset.cases;
  if (cases.length === 0) throw new Error(`runEval(): dataset '${dataset.id}' has no cases to run`);
  const ids = new Set<string>();
  for (const c of cases) {
    if (ids.has(c.id)) throw new Error(`runEval(): case id '${c.id}' appears twice`);
    ids.add(c.id);
    if (c.input.image !== undefined && !options.images)
      throw new Error(`runEval(): case '${c.id}' has an image but no image reader was given (options.images)`);
  }
  const total = cases.length * repeats;
  if (total > MAX_TRIALS)
    throw new RangeError(
      `runEval(): ${cases.length} cases × ${repeats} repeats is ${total} trials, over the ${MAX_TRIALS} one run may plan; lower repeats or select fewer cases`,
    );
  const clusterField = clusterFieldOf(options.cluster);
  if (clusterField !== undefined && !cases.some((c) => clusterValue(c, clusterField) !== undefined))
    throw new Error(
      `runEval(): the cluster field '${clusterField}' is set on none of the ${cases.length} cases; ` +
        `name a field they carry (${clusterChoices(cases)}) or leave cluster out`,
    );
  const gen = options.generation ?? {};
  const now = options.now ?? (() => new Date());

  const caseInfo: RunCaseInfo[] = cases.map((c) => {
    const cluster = clusterField ? clusterValue(c, clusterField) : undefined;
    return {
      id: c.id,
      hash: caseHash(c),
      tags: [...c.tags],
      ...(c.split !== undefined ? { split: c.split } : {}),
      ...(cluster !== undefined ? { cluster } : {}),
    };
  });
  const fingerprint: Fingerprint = {
    datasetVersion: datasetVersion(cases),
    caseHashes: Object.fromEntries(caseInfo.map((c) => [c.id, c.hash])),
    evaluators: Object.fromEntries(evaluators.map((e) => [e.name, e.version])),
    model: options.modelIdentity ?? { key: model.spec.key },
    generation: {
      temperature: gen.temperature ?? 0,
      maxNewTokens: gen.maxNewTokens ?? null,
      topK: gen.topK ?? null,
      seed: gen.seed ?? null,
      stop: gen.stop ? [...gen.stop] : null,
      repeats,
    },
    ...(options.variant !== undefined ? { variant: options.variant } : {}),
    ...(options.codeVersion !== undefined ? { codeVersion: options.codeVersion } : {}),
    ...(options.evalrxVersion !== undefined ? { evalrxVersion: options.evalrxVersion } : {}),
  };
  const evalKey = options.evalKey ?? `${dataset.id}:${names.join("+")}`;
  const config: EvalRunConfig = {
    ...options.extraConfig,
    eval: evalKey,
    repeats,
    ...(clusterField !== undefined ? { clusterField } : {}),
    evaluators: evaluators.map((e) => ({ name: e.name, version: e.version, kind: e.kind })),
    fingerprint,
    cases: caseInfo,
  };

  const wanted = options.resume ?? options.runId;
  if (options.lock && wanted !== undefined && options.lock.runId !== wanted)
    throw new Error(`runEval(): the lock given is for run '${options.lock.runId}', not for '${wanted}'`);
  const lock = options.lock ?? (await lockNewOrNamed(store, wanted, evalKey, now));
  const release = async () => {
    if (!options.lock) await lock.release();
  };
  let closed: Promise<void> | undefined;
  try {
    const { result, recorded } = await judgeRun(
      options,
      { cases, repeats, concurrency, gen, now, fingerprint, evalKey, config, total },
      lock.runId,
    );
    if (!options.closeBehind) {
      await recorded;
      return result;
    }
    // The lock is let go only once the run's end is recorded: no other writer gets in between.
    closed = recorded.finally(release);
    options.closeBehind(closed);
    return result;
  } finally {
    if (!closed) await release();
  }
}

/** What `runEval` has worked out before it judges anything. */
interface Plan {
  readonly cases: readonly FailureCase[];
  readonly repeats: number;
  readonly concurrency: number;
  readonly gen: GenerationSettings;
  readonly now: () => Date;
  readonly fingerprint: Fingerprint;
  readonly evalKey: string;
  readonly config: EvalRunConfig;
  readonly total: number;
}

/**
 * The writer lock of the run `runEval` will write: the named one (a resumed
 * run, or a given id), or a fresh id of this eval whose lock is free (another
 * process may be starting a run of the same eval in the same second).
 */
async function lockNewOrNamed(
  store: Store,
  id: string | undefined,
  evalKey: string,
  now: () => Date,
): Promise<RunLock> {
  if (id !== undefined) return store.lockRun(id);
  const base = `${evalKey.replace(/[^\w.-]+/g, "-")}-${stamp(now())}`;
  for (let k = 1; ; k++) {
    const candidate = k === 1 ? base : `${base}-${k}`;
    if (await store.getRun(candidate)) continue;
    let lock: RunLock;
    try {
      lock = await store.lockRun(candidate);
    } catch (error) {
      if ((error as Error)?.name === "RunLockedError") continue;
      throw error;
    }
    if (!(await store.getRun(candidate))) return lock;
    await lock.release();
  }
}

/** Judges every pending item of the run `runId` (new or resumed) while holding its lock. */
async function judgeRun(options: RunEvalOptions, plan: Plan, runId: string): Promise<RunEnd> {
  const { store, dataset, model, evaluators } = options;
  const { cases, repeats, concurrency, gen, now, fingerprint, evalKey, config, total } = plan;
  let record: RunRecord;
  const done = new Set<number>();
  // Every item the run holds, as stored: those read on resume, then each batch once its write committed. The
  // summary is made from these, not from the store read back (a round trip per run the page's worker waited on).
  const held: ItemRecord[] = [];
  // Settles once the run is in the store (at once for a resumed run); no item is written before.
  let opened: Promise<void>;
  if (options.resume !== undefined) {
    const existing = await store.getRun(options.resume);
    if (!existing) throw new Error(`runEval(): no run '${options.resume}' to resume in the store`);
    const before = evalConfig(existing);
    if (fingerprintHash(before.fingerprint) !== fingerprintHash(fingerprint) || before.eval !== evalKey) {
      const changed = planDifferences(before.fingerprint, fingerprint);
      if (before.eval !== evalKey) changed.unshift(`the eval is '${evalKey}' where the run's is '${before.eval}'`);
      throw new Error(
        `runEval(): run '${existing.id}' was made with a different plan: ${changed.join("; ") || "its fingerprint differs"}. ` +
          "Resume it with the run's settings, or start a new run instead of resuming it",
      );
    }
    if (existing.status === "finished") throw new Error(`runEval(): run '${existing.id}' is already finished`);
    for (const item of await store.items(existing.id)) {
      done.add(item.index);
      held.push(item);
    }
    record = existing;
    await store.updateRun(existing.id, { status: "running" });
    opened = Promise.resolve();
  } else {
    const id = runId;
    record = {
      id,
      kind: "eval",
      dataset: dataset.id,
      model: fingerprint.model.key,
      fingerprint: fingerprintHash(fingerprint),
      status: "running",
      startedAt: now().toISOString(),
      config,
    };
    // Created, and its plan logged, while the first trials are judged (two round trips a page's worker waited on
    // before each run, 13 runs in an investigation's repairs): the first write of items waits for it.
    const created = record;
    opened = (async () => {
      await store.createRun(created);
      await store.appendEvents(id, [
        {
          stage: "plan",
          schema: 1,
          type: "eval.plan",
          payload: { eval: evalKey, cases: cases.length, repeats, total },
        },
      ]);
    })();
  }
  const seedBase = gen.seed !== undefined ? gen.seed : `run:${runId}`;

  const pending: number[] = [];
  for (let i = 0; i < total; i++) if (!done.has(i)) pending.push(i);
  // Each image read once, kept from its first pending trial to its last (several questions, several repeats).
  const images = plannedImages(imageUses(pending.map((index) => cases[Math.floor(index / repeats)]!.input.image)));
  const imageOf = (row: FailureCase): Promise<Uint8Array | ImagePixels> =>
    images.take(row.input.image!, () => options.images!(row.input.image!, row));

  let stored = done.size;
  let failure: unknown;
  // A run that could not be created is not ours to mark failed (createRun refuses an id already in the store).
  let openFailure: unknown;
  opened.catch((e: unknown) => {
    openFailure = e;
    failure ??= e;
  });
  // Judged items are written behind the judging, not in its way: while one write is in flight the next trials run,
  // and the items they judge meanwhile go into the next write together (one transaction, with the progress marker).
  // An IndexedDB commit costs about as much as a trial of a small model, so writing each item before judging the
  // next kept the page's worker idle a third of the time. An item is judged once it is stored: one that is in memory
  // when the process dies is judged again on resume, never twice in the store.
  const queued: ItemRecord[] = [];
  let writing: Promise<void> | undefined;
  const drain = async (): Promise<void> => {
    try {
      await opened;
      while (queued.length && failure === undefined) {
        const batch = queued.splice(0, MAX_WRITE_BATCH);
        await store.appendItems(runId, batch, { done: stored + batch.length, total, updatedAt: now().toISOString() });
        stored += batch.length;
        held.push(...batch);
        options.onProgress?.({ stage: "judge", done: stored, total });
      }
    } catch (e) {
      failure ??= e;
    } finally {
      // Cleared in the same turn the queue was found empty: an item queued later starts the next drain.
      writing = undefined;
    }
  };
  const write = async (item: ItemRecord): Promise<void> => {
    queued.push(item);
    if (failure !== undefined) return;
    writing ??= drain();
    // A store slower than the model: judging waits rather than holding an unbounded backlog in memory.
    if (queued.length >= MAX_WRITE_BATCH) await writing;
  };
  const flushed = async (): Promise<void> => {
    while (writing) await writing;
  };
  // Said once the run is in the store: a listener may read it at once.
  const starting = { stage: "judge", done: stored, total } as const;
  if (options.resume !== undefined) options.onProgress?.(starting);
  else
    void opened.then(
      () => options.onProgress?.(starting),
      () => undefined,
    );

  const signal = options.signal;
  let cursor = 0;
  // A model whose runs settle at once (WebAssembly in the page's worker) would hold every task queued meanwhile
  // until the last trial: the store's callbacks (the run's creation, each write, so its progress) and a Cancel.
  const breathe = taskYielder(JUDGING_SLICE_MS);
  const worker = async () => {
    while (failure === undefined && !signal?.aborted && cursor < pending.length) {
      const index = pending[cursor++]!;
      const row = cases[Math.floor(index / repeats)]!;
      const repeat = index % repeats;
      const started = Date.now();
      let output = "";
      let error: string | undefined;
      try {
        const input: ModelInput = {
          prompt: row.input.prompt,
          ...(row.input.image !== undefined ? { image: await imageOf(row) } : {}),
        };
        output = await model.generate(input, {
          temperature: gen.temperature ?? 0,
          seed: trialSeed(seedBase, row.id, repeat),
          ...(gen.maxNewTokens !== undefined ? { maxNewTokens: gen.maxNewTokens } : {}),
          ...(gen.topK !== undefined ? { topK: gen.topK } : {}),
          ...(gen.stop ? { stop: gen.stop } : {}),
          ...(signal ? { signal } : {}),
        });
      } catch (e) {
        if (signal?.aborted) return; // cancelled mid-generation: nothing to record
        error = e instanceof Error ? e.message : String(e);
      }
      const latencyMs = Date.now() - started;
      const checks =
        error === undefined
          ? await runChecks(evaluators, {
              output,
              expected: row.expected,
              input: row.input,
              row,
              ...(signal ? { signal } : {}),
            })
          : [];
      const item: ItemRecord = {
        runId,
        caseId: row.id,
        repeat,
        index,
        output,
        passed: error === undefined && checks.every((c) => c.passed && !c.errored),
        checks: checks.map(toItemCheck),
        ...(error !== undefined ? { error } : {}),
        latencyMs,
      };
      await write(item);
      await breathe();
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, pending.length || 1) }, worker));
  await flushed();
  await opened.catch(() => undefined);
  if (openFailure !== undefined) throw openFailure;
  if (failure !== undefined) {
    await store.updateRun(runId, { status: "failed", finishedAt: now().toISOString() }).catch(() => undefined);
    throw failure;
  }
  const cancelled = signal?.aborted === true && stored < total;
  held.sort((a, b) => a.index - b.index);
  return closeRun(store, record, cancelled ? "cancelled" : "finished", held, evaluators, now, {
    type: cancelled ? "eval.cancelled" : "eval.finished",
    payload: { done: stored, total },
  });
}

/** What differs between the plan a run was made with and this one, one phrase each (for a refused resume). */
function planDifferences(before: Fingerprint, now: Fingerprint): string[] {
  const out: string[] = [];
  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  if (before.datasetVersion !== now.datasetVersion) {
    const ids = new Set([...Object.keys(before.caseHashes), ...Object.keys(now.caseHashes)]);
    let added = 0;
    let removed = 0;
    let edited = 0;
    for (const id of ids) {
      const a = before.caseHashes[id];
      const b = now.caseHashes[id];
      if (a === undefined) added++;
      else if (b === undefined) removed++;
      else if (a !== b) edited++;
    }
    out.push(
      `the cases differ (${added} new, ${removed} missing, ${edited} edited; the selection or the data changed)`,
    );
  }
  for (const name of new Set([...Object.keys(before.evaluators), ...Object.keys(now.evaluators)]))
    if (before.evaluators[name] !== now.evaluators[name])
      out.push(
        `evaluator '${name}' is ${now.evaluators[name] ? `version ${now.evaluators[name]}` : "absent"} where the run's is ${before.evaluators[name] ? `version ${before.evaluators[name]}` : "absent"}`,
      );
  if (before.model.key !== now.model.key)
    out.push(`the model is '${now.model.key}' where the run used '${before.model.key}'`);
  else if (!same(before.model.files, now.model.files)) out.push(`the model's files changed`);
  for (const key of new Set([...Object.keys(before.generation), ...Object.keys(now.generation)]))
    if (!same(before.generation[key], now.generation[key]))
      out.push(
        `${key} is ${JSON.stringify(now.generation[key] ?? null)} where the run used ${JSON.stringify(before.generation[key] ?? null)}`,
      );
  if ((before.variant ?? null) !== (now.variant ?? null))
    out.push(
      `the variant is ${JSON.stringify(now.variant ?? null)} where the run's is ${JSON.stringify(before.variant ?? null)}`,
    );
  if ((before.codeVersion ?? null) !== (now.codeVersion ?? null))
    out.push(`the code changed (${before.codeVersion ?? "unknown"} → ${now.codeVersion ?? "unknown"})`);
  if ((before.evalrxVersion ?? null) !== (now.evalrxVersion ?? null))
    out.push(`evalrx changed (${before.evalrxVersion ?? "unknown"} → ${now.evalrxVersion ?? "unknown"})`);
  return out;
}

/** A judged run: what it found, and the recording of its end in the store, under way. */
interface RunEnd {
  readonly result: EvalRunResult;
  readonly recorded: Promise<void>;
}

/**
 * Summarises a run's items and starts recording the end of the run: its status,
 * finish time and summary, and a summary event whose payload gains the pass rate.
 */
function closeRun(
  store: Store,
  record: RunRecord,
  status: RunRecord["status"],
  items: readonly ItemRecord[],
  evaluators: readonly Evaluator[],
  now: () => Date,
  event: { readonly type: string; readonly payload: Readonly<Record<string, unknown>> },
): RunEnd {
  const finishedAt = now().toISOString();
  const view = runView({ ...record, status, finishedAt }, items);
  const summary = summarize(view, evaluators);
  const stored = summary as unknown as Record<string, unknown>;
  // The summary event first, the status last: a run marked finished holds everything it reports.
  const recorded = (async () => {
    await store.appendEvents(record.id, [
      { stage: "summary", schema: 1, type: event.type, payload: { ...event.payload, pass: summary.pass } },
    ]);
    await store.updateRun(record.id, { status, finishedAt, summary: stored });
  })();
  return { result: { run: { ...view, summary: stored }, summary, items }, recorded };
}

/**
 * Reads a stored eval run back as a `RunView`.
 *
 * @example const view = await loadRun(store, "pope-20261130T101500Z")
 */
export async function loadRun(store: Store, id: string): Promise<RunView> {
  const run = await store.getRun(id);
  if (!run) throw new Error(`no run '${id}' in the store`);
  return runView(run, await store.items(id));
}

/**
 * The baseline a gate names: `"latest"` is the last finished run of the same
 * eval that started before this one (never the run itself); anything else is a run id.
 *
 * @example await resolveBaseline(store, candidate, "latest") // the previous finished run of candidate's eval
 */
export async function resolveBaseline(store: Store, run: RunView, baseline: string): Promise<RunView> {
  if (baseline !== "latest") return loadRun(store, baseline);
  const runs = await store.listRuns({ kind: "eval", status: "finished" });
  for (const r of runs) {
    if (r.id === run.id || r.startedAt > run.startedAt) continue;
    let key: string | undefined;
    try {
      key = evalConfig(r).eval;
    } catch {
      continue;
    }
    if (key === run.evalKey) return runView(r, await store.items(r.id));
  }
  throw new Error(`no finished run of eval '${run.evalKey}' before '${run.id}' to use as the 'latest' baseline`);
}

export interface RescoreOptions {
  /** The cases the run used (default: read from the store's copy of the run's dataset). */
  readonly cases?: readonly FailureCase[];
  readonly runId?: string;
  readonly now?: () => Date;
}

/**
 * Judges a recorded run again with other (deterministic) evaluators, without
 * re-running the model. The new verdicts sit beside the old: they go into a
 * new run (`config.rescoreOf` names the original) with the same outputs,
 * latencies and model errors; the original is never touched. A judge needs a
 * new run (its verdicts are not a function of the output alone) and is refused.
 * A case whose input or expected changed since the run is refused by name.
 *
 * @example const { run } = await rescore(store, "pope-…", [yesNo(), regex(/^(yes|no)\b/)])
 */
export async function rescore(
  store: Store,
  runId: string,
  evaluators: readonly Evaluator[],
  options: RescoreOptions = {},
): Promise<EvalRunResult> {
  const judges = evaluators.filter((e) => e.kind === "judge").map((e) => e.name);
  if (judges.length)
    throw new Error(
      `rescore: [${judges.join(", ")}] call a model; a judge needs a new run (runEval), rescore takes deterministic evaluators only`,
    );
  if (evaluators.length === 0) throw new Error("rescore: no evaluators given");
  const original = await store.getRun(runId);
  if (!original) throw new Error(`rescore: no run '${runId}' in the store`);
  const config = evalConfig(original);
  const rows = new Map<string, FailureCase>();
  for (const c of options.cases ?? (await store.cases(original.dataset))) rows.set(c.id, c);
  const now = options.now ?? (() => new Date());
  for (const info of config.cases) {
    const row = rows.get(info.id);
    if (!row)
      throw new Error(`rescore: case '${info.id}' of run '${runId}' is not in dataset '${original.dataset}' any more`);
    if (caseHash(row) !== info.hash)
      throw new Error(
        `rescore: case '${info.id}' changed since run '${runId}' (its input or expected differs); rescoring it would judge a different case`,
      );
  }
  const fingerprint: Fingerprint = {
    ...config.fingerprint,
    evaluators: Object.fromEntries(evaluators.map((e) => [e.name, e.version])),
  };
  const newConfig: EvalRunConfig = {
    ...config,
    evaluators: evaluators.map((e) => ({ name: e.name, version: e.version, kind: e.kind })),
    fingerprint,
    rescoreOf: runId,
  };
  let id = options.runId ?? `${runId}-rescore`;
  for (let k = 2; !options.runId && (await store.getRun(id)); k++) id = `${runId}-rescore-${k}`;
  const record: RunRecord = {
    ...original,
    id,
    fingerprint: fingerprintHash(fingerprint),
    status: "running",
    startedAt: now().toISOString(),
    config: newConfig,
  };
  delete (record as { finishedAt?: string }).finishedAt;
  delete (record as { summary?: unknown }).summary;
  await store.createRun(record);
  const items = await store.items(runId);
  const rescored: ItemRecord[] = [];
  for (const item of items) {
    const row = rows.get(item.caseId)!;
    const checks =
      item.error === undefined
        ? await runChecks(evaluators, { output: item.output, expected: row.expected, input: row.input, row })
        : [];
    rescored.push({
      ...item,
      runId: id,
      passed: item.error === undefined && checks.every((c) => c.passed && !c.errored),
      checks: checks.map(toItemCheck),
    });
  }
  const total = config.cases.length * config.repeats;
  await store.appendItems(id, rescored, { done: rescored.length, total, updatedAt: now().toISOString() });
  const { result, recorded } = closeRun(store, record, original.status, rescored, evaluators, now, {
    type: "eval.rescored",
    payload: { rescoreOf: runId },
  });
  await recorded;
  return result;
}
