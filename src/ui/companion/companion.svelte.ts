import type { CompanionStatus, EvalJobBody, InvestigateJobBody, JobMessage } from "../../node/companion/protocol.ts";
import {
  investigationData,
  newInvestigationId,
  writerLockId,
  type InvestigationPlan,
} from "../../../workers/investigate-job.ts";
import type { RunLock } from "../../store/types.ts";
import type { IdbStore } from "../../store/idb.browser.ts";
import type { EvalConfig } from "../../evals/config.ts";
import type { StoreService } from "../app/store.svelte.ts";
import type { ModelChoice } from "../app/jobs.svelte.ts";
import { PAGE_CODE_VERSION } from "../app/jobs.svelte.ts";
import { errorText } from "../app/errors.ts";
import { applyStoreOp, CompanionClient, CompanionError, type Pairing } from "./client.ts";
import { PAIRING_KEY, readPairing } from "./pairing.ts";

/** Where an eval runs: in this page's model worker, or on the paired companion. */
export type RunOn = "page" | "companion";

/** How the companion looks from the page now. */
export type CompanionState =
  | { readonly kind: "unpaired" }
  | { readonly kind: "checking" }
  | { readonly kind: "reachable"; readonly status: CompanionStatus }
  | { readonly kind: "unreachable"; readonly reason: string }
  | { readonly kind: "refused"; readonly reason: string };

/** One eval or investigation this page handed to the companion. */
export interface CompanionJobView {
  readonly runId: string;
  readonly kind: "eval" | "investigate";
  /** What it is doing now (the latest progress line's stage). */
  readonly stage?: string;
  readonly jobId: string;
  readonly state: "running" | "finished" | "cancelled" | "failed";
  readonly done: number;
  readonly total: number;
  readonly error?: string;
}

/** The fields of a plain investigation plan (the companion's loop takes these and no others). */
const PLAIN_PLAN = new Set(["dataset", "select", "question", "maxTier", "holdout", "seed"]);

/** What a stored case is as a line of the dataset file the companion reads (the store's own fields left out). */
function caseLine(c: Record<string, unknown>): string {
  const { id, input, expected, tags, split, cluster, status, meta } = c;
  return JSON.stringify({ id, input, expected, tags, split, cluster, status, meta });
}

function base64(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/**
 * The paired companion, as the page sees it: the pairing (kept in
 * localStorage), whether it answers and which version it is, and the evals
 * handed to it. A job's store writes are made again in IndexedDB as they
 * stream in, under the run's Web Lock, so the run is the page's own: the runs
 * list, the run page and Resume treat it as if the page had run it.
 */
export class CompanionService {
  pairing = $state.raw<Pairing | undefined>();
  state = $state.raw<CompanionState>({ kind: "unpaired" });
  jobs = $state.raw<readonly CompanionJobView[]>([]);
  readonly #storage: Pick<Storage, "getItem" | "setItem" | "removeItem"> | undefined;

  constructor(storage: Pick<Storage, "getItem" | "setItem" | "removeItem"> | undefined = globalThis.localStorage) {
    this.#storage = storage;
    this.pairing = readPairing(storage?.getItem(PAIRING_KEY) ?? null);
    if (this.pairing) void this.check();
  }

  get client(): CompanionClient | undefined {
    return this.pairing ? new CompanionClient(this.pairing) : undefined;
  }

  /** Remembers a pairing (from the companion's link) and checks it answers. */
  async pair(pairing: Pairing): Promise<CompanionState> {
    this.pairing = pairing;
    this.#storage?.setItem(PAIRING_KEY, JSON.stringify(pairing));
    return this.check();
  }

  unpair(): void {
    this.pairing = undefined;
    this.#storage?.removeItem(PAIRING_KEY);
    this.state = { kind: "unpaired" };
  }

  /** Asks the companion for its status. */
  async check(): Promise<CompanionState> {
    const client = this.client;
    if (!client) return (this.state = { kind: "unpaired" });
    this.state = { kind: "checking" };
    try {
      const status = await client.status();
      if (status.name !== "evalrx-companion")
        return (this.state = { kind: "refused", reason: `${client.pairing.url} is not an evalrx companion` });
      return (this.state = { kind: "reachable", status });
    } catch (error) {
      const reason = errorText(error);
      return (this.state =
        error instanceof CompanionError && error.status > 0
          ? { kind: "refused", reason }
          : { kind: "unreachable", reason });
    }
  }

  job(runId: string): CompanionJobView | undefined {
    return this.jobs.find((j) => j.runId === runId);
  }

  #upsert(job: CompanionJobView): void {
    this.jobs = this.job(job.runId) ? this.jobs.map((j) => (j.runId === job.runId ? job : j)) : [...this.jobs, job];
  }

  /**
   * Hands an eval to the companion: the stored dataset's cases and images go
   * with it, the run id is chosen here, and the run's writes are made in
   * IndexedDB as they arrive. Resolves with the run id once the run exists in
   * the page's store; the job goes on in the background.
   */
  async startEval(config: EvalConfig, model: ModelChoice, store: StoreService): Promise<string> {
    const client = this.client;
    if (!client)
      throw new Error("no companion is paired: open the link 'evalrx companion' printed, or run on this page");
    const idb = await store.ready;
    const dataset = await idb.getDataset(config.dataset);
    if (!dataset) throw new Error(`the eval names dataset '${config.dataset}', which is not stored in this browser`);
    const cases = (await idb.cases(dataset.id)).filter((c) => c.status === "active");
    const images: Record<string, string> = {};
    for (const c of cases) {
      const ref = c.input.image;
      if (ref?.startsWith("sha256:") && !(ref in images)) {
        const image = await idb.getImage(ref);
        if (!image) throw new Error(`image ${ref} of case '${c.id}' is not in this browser's store`);
        images[ref] = base64(image.bytes);
      }
    }
    const stamp = new Date()
      .toISOString()
      .replace(/[-:]/g, "")
      .replace(/\.\d+Z$/, "Z");
    const base = `${(config.name ?? dataset.id).replace(/[^\w.-]+/g, "-")}-${stamp}-companion`;
    let runId = base;
    for (let k = 2; await idb.getRun(runId); k++) runId = `${base}-${k}`;
    const key = model.source.kind === "bundled" ? model.source.key : config.model;
    const body: EvalJobBody = {
      kind: "eval",
      config: { ...config, model: key },
      cases: cases.map((c) => caseLine(c as unknown as Record<string, unknown>)).join("\n"),
      images,
      modelSource: model,
      runId,
      codeVersion: PAGE_CODE_VERSION,
    };
    return this.#hand(client, body, idb, store, await idb.lockRun(runId));
  }

  /**
   * Hands an investigation to the companion: the plan's cases are chosen
   * here, as the page's own job chooses them (the selection, in import
   * order, cases with unusable images left out), sent with their images and
   * fingerprint, and the investigation's writes (its log, its label, probe
   * and repair runs, its report) are made in IndexedDB as they arrive, under
   * the investigation's writer lock, so the investigation page follows it
   * live and its Resume goes on from it in the page. Resolves with the run id
   * once the run exists here.
   */
  async startInvestigation(plan: InvestigationPlan, model: ModelChoice, store: StoreService): Promise<string> {
    const client = this.client;
    if (!client)
      throw new Error("no companion is paired: open the link 'evalrx companion' printed, or run on this page");
    if (model.source.kind !== "bundled")
      throw new Error(
        "the companion runs bundled models (and folders under its --models); this model was loaded into the page: run the investigation on this page",
      );
    // The companion runs the plain loop M1→M5: a plan asking for more (an agentic loop, a probe search) stays here.
    const beyond = Object.entries(plan)
      .filter(([k, v]) => !PLAIN_PLAN.has(k) && v !== undefined && v !== false)
      .map(([k]) => k);
    if (beyond.length)
      throw new Error(
        `the companion runs the plain loop M1→M5; ${beyond.join(", ")} run${beyond.length === 1 ? "s" : ""} on this page only`,
      );
    const idb = await store.ready;
    const data = await investigationData(idb, plan);
    const images: Record<string, string> = {};
    for (const c of data.cases) {
      const ref = c.input.image;
      if (ref?.startsWith("sha256:") && !(ref in images)) images[ref] = base64(await data.images(ref));
    }
    const runId = await newInvestigationId(idb, data.fingerprint, plan.seed);
    const body: InvestigateJobBody = {
      kind: "investigate",
      plan,
      model: model.source.key,
      cases: data.cases.map((c) => JSON.stringify(c)).join("\n"),
      fingerprint: data.fingerprint,
      source: data.source,
      ...(data.sampled ? { sampled: data.sampled } : {}),
      images,
      modelSource: model,
      runId,
      codeVersion: PAGE_CODE_VERSION,
    };
    return this.#hand(client, body, idb, store, await idb.lockRun(writerLockId(runId)));
  }

  /**
   * Starts `body` on the companion and follows its stream in the background,
   * making each store write in IndexedDB while `lock` is held; resolves once
   * the job's run exists here, and lets the lock go when the stream ends.
   */
  async #hand(
    client: CompanionClient,
    body: EvalJobBody | InvestigateJobBody,
    idb: IdbStore,
    store: StoreService,
    lock: RunLock,
  ): Promise<string> {
    const runId = body.runId!;
    let accepted;
    try {
      accepted = await client.start(body);
    } catch (error) {
      await lock.release();
      throw error;
    }
    this.#upsert({ runId, kind: body.kind, jobId: accepted.id, state: "running", done: 0, total: 0 });
    let created!: () => void;
    let failedEarly!: (e: unknown) => void;
    const ready = new Promise<void>((resolve, reject) => {
      created = resolve;
      failedEarly = reject;
    });
    let exists = false;
    void (async () => {
      let lastAnnounce = 0;
      // Other screens read the run again at most twice a second while its items and events stream in.
      const announce = (force = false) => {
        if (!force && Date.now() - lastAnnounce < 500) return;
        lastAnnounce = Date.now();
        void store.changed({ kind: "runs", id: runId });
      };
      try {
        for await (const m of client.messages(accepted.id) as AsyncGenerator<JobMessage>) {
          if (m.type === "store") {
            await applyStoreOp(idb, m.write);
            if (m.write.op === "createRun" && m.write.run.id === runId) {
              exists = true;
              announce(true);
              created();
            }
            // A status change (finished, cancelled) shows at once on every screen.
            if (m.write.op === "updateRun" && m.write.id === runId) announce(true);
            if (m.write.op === "appendItems" && m.write.runId === runId) {
              const p = m.write.progress;
              this.#upsert({ ...this.job(runId)!, done: p.done, total: p.total });
            }
            if (m.write.op === "appendItems" || m.write.op === "appendEvents") announce();
          } else if (m.type === "progress") {
            this.#upsert({ ...this.job(runId)!, stage: m.stage, done: m.done, total: m.total });
          } else {
            this.#upsert({
              ...this.job(runId)!,
              state: m.state,
              ...(m.error !== undefined ? { error: m.error } : {}),
            });
            if (!exists)
              failedEarly(new Error(m.error ?? `the companion's job ended (${m.state}) before the run began`));
          }
        }
      } catch (error) {
        this.#upsert({ ...this.job(runId)!, state: "failed", error: errorText(error) });
        if (!exists) failedEarly(error);
      } finally {
        await lock.release();
        void store.changed({ kind: "runs", id: runId });
      }
    })();
    await ready;
    return runId;
  }

  /** Stops a job the companion runs for this page (what it judged is kept here, and can be resumed). */
  async cancel(runId: string): Promise<void> {
    const job = this.job(runId);
    if (!job || !this.client) return;
    await this.client.cancel(job.jobId);
  }
}

let shared: CompanionService | undefined;

/** The page's one companion service (created on first use). */
export function companionService(): CompanionService {
  shared ??= new CompanionService();
  return shared;
}

/** What a job form offers the companion: its config and model, and where it shows starting and failure. */
export interface JobForm {
  readonly config: { config?: EvalConfig; error?: string };
  readonly modelChoice: { readonly choice: ModelChoice } | undefined;
  starting: boolean;
  failure: string | undefined;
}

/**
 * Starts a form's eval on the companion, as the form's own Start does in the
 * page: the form shows it starting, and the reason when it cannot.
 * Resolves with the run id, or undefined when it did not start.
 *
 * @example const id = await startOnCompanion(form, app.store); if (id) app.router.go({ page: "runs", id })
 */
export async function startOnCompanion(form: JobForm, store: StoreService): Promise<string | undefined> {
  const { config, error } = form.config;
  const option = form.modelChoice;
  if (!config || !option) {
    form.failure = error;
    return undefined;
  }
  form.starting = true;
  form.failure = undefined;
  try {
    return await companionService().startEval(config, option.choice, store);
  } catch (e) {
    form.failure = `the companion: ${errorText(e)}`;
    return undefined;
  } finally {
    form.starting = false;
  }
}

/** What the investigation form offers the companion: its plan and model, and where it shows starting and failure. */
export interface InvestigationForm {
  readonly plan: { plan?: InvestigationPlan; error?: string };
  readonly modelOptions: readonly { readonly value: string; readonly choice: ModelChoice }[];
  readonly model: string;
  starting: boolean;
  failure: string | undefined;
}

/**
 * Starts the form's investigation on the companion, as the form's own Start
 * does in the page. Resolves with the run id, or undefined when it did not start.
 *
 * @example const id = await startInvestigationOnCompanion(form, app.store); if (id) app.router.go(investigateRoute(id))
 */
export async function startInvestigationOnCompanion(
  form: InvestigationForm,
  store: StoreService,
): Promise<string | undefined> {
  const { plan, error } = form.plan;
  const option = form.modelOptions.find((o) => o.value === form.model);
  if (!plan || !option) {
    form.failure = error ?? "model: choose a model";
    return undefined;
  }
  form.starting = true;
  form.failure = undefined;
  try {
    return await companionService().startInvestigation(plan, option.choice, store);
  } catch (e) {
    form.failure = `the companion: ${errorText(e)}`;
    return undefined;
  } finally {
    form.starting = false;
  }
}
