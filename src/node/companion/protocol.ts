/**
 * What the page and the companion say to each other, as plain data. Types
 * only, with no Node or DOM import: the page imports them too.
 *
 * A job's stream (`GET /jobs/<id>/events`, server-sent events) carries, in
 * order: `store` messages (each write the job made to its store, for the page
 * to make to IndexedDB in the same order, so the page's records are those the
 * page would have written itself), `progress` messages, and one final `end`.
 */
import type { EvalConfig } from "../../evals/config.ts";
import type { EventRecord, ItemRecord, RunExport, RunProgress, RunRecord, ScoreRecord } from "../../store/types.ts";
import type { Lesson } from "../../agent/lessons/lessons.ts";
import type { InvestigationPlan } from "../../../workers/investigate-job.ts";

/** The companion's name in `GET /status`, so the page knows it reached one. */
export const COMPANION_NAME = "evalrx-companion";

/** `GET /status`. */
export interface CompanionStatus {
  readonly name: typeof COMPANION_NAME;
  readonly version: string;
  /** Jobs running now, and the most it takes at once (beyond that a new one is answered 429). */
  readonly jobs: { readonly running: number; readonly max: number };
  /** Where work items go: this process, or a BullMQ queue (its Redis address, without credentials). */
  readonly runner: { readonly kind: "local" } | { readonly kind: "queue"; readonly redis: string };
  /** The bundled models (by key) and the model folders under `--models` a job may name. */
  readonly models: readonly string[];
}

/**
 * `POST /jobs` with `kind: "eval"`: the page's eval job (see
 * `workers/eval-job.ts`) with what the page holds in IndexedDB sent along.
 */
export interface EvalJobBody {
  readonly kind: "eval";
  /**
   * The eval in the CLI's config format. `dataset` names the inline dataset's
   * id when `cases` is given, else a dataset file under the companion's
   * `--data` folder; `model` is a bundled model's key or a folder under `--models`.
   */
  readonly config: EvalConfig;
  /** The page's stored cases of `config.dataset`, as JSONL (one case per line). */
  readonly cases?: string;
  /** The page's stored images the cases name, `sha256:<hex>` → base64 of the bytes. */
  readonly images?: Readonly<Record<string, string>>;
  /** How the page loads this model again (kept in the run so the page can resume it itself). */
  readonly modelSource?: unknown;
  /** The new run's id. */
  readonly runId?: string;
  /** Continue this interrupted run; `from` is the page's copy of it (the page's store is the truth). */
  readonly resume?: string;
  readonly from?: RunExport;
  /** The code version for the run's fingerprint (the page sends its own, so the run resumes in either place). */
  readonly codeVersion?: string;
}

/**
 * `POST /jobs` with `kind: "investigate"`: the page's investigation (the loop
 * M1→M5, see `workers/investigate-job.ts`), with the cases the page's plan
 * chose sent along. It runs in the companion's process (it reads the model's
 * internals), never through a queue.
 */
export interface InvestigateJobBody {
  readonly kind: "investigate";
  /** The page's plan: dataset id, selection, question, ceiling, holdout, seed. */
  readonly plan: InvestigationPlan;
  /** A bundled model's key, or a folder under the companion's `--models`. */
  readonly model: string;
  /** The cases the plan chose, in the page's import order, as JSONL (the loop's draws depend on the order). */
  readonly cases: string;
  /** The page's fingerprint of those cases (12 hex of sha256 over them): what arrived is checked against it. */
  readonly fingerprint: string;
  /** The dataset's source file name, for the report. */
  readonly source: string;
  /** How the cases were chosen, when not all of them (stated in the report). */
  readonly sampled?: string;
  /** The page's stored images the cases name, `sha256:<hex>` → base64 of the bytes. */
  readonly images?: Readonly<Record<string, string>>;
  /** How the page loads this model again (kept in the run so the page can resume it itself). */
  readonly modelSource?: unknown;
  /** The new investigation's id (the page chooses it, unique in its store). */
  readonly runId: string;
  readonly codeVersion?: string;
  /**
   * The page's lessons that matter most for this run (ranked for its model and
   * dataset, as the page's own loop would rank them): the loop reads them at
   * its start; the lessons it records come back in `lessons` messages.
   */
  readonly lessons?: readonly Lesson[];
}

/**
 * `POST /jobs` with `kind: "calibrate"`: the Compare page's A/A calibration
 * (`evalrx calibrate`) over runs the page holds, sent with their items.
 * Nothing is stored: the result comes back in the `end` message, as the
 * page's stats worker hands it back.
 */
export interface CalibrateJobBody {
  readonly kind: "calibrate";
  /** Two or more runs of one eval, each with its judged items. */
  readonly runs: readonly { readonly run: RunRecord; readonly items: readonly ItemRecord[] }[];
  readonly options?: { readonly target?: number; readonly alpha?: number; readonly simulations?: number };
}

/**
 * `POST /jobs` with `kind: "explore"`: `evalrx explore` over an eval log the
 * page stores as a dataset (its cases carry a pass/fail label and columns),
 * M2–M4 with no model. The report is written as a run of kind `explore`: its
 * event log and its report score, relayed to the page like any other run.
 */
export interface ExploreJobBody {
  readonly kind: "explore";
  /** The stored dataset's cases (with their `label` and `meta` columns), as JSONL. */
  readonly cases: string;
  /** The dataset's source file name, for the report. */
  readonly source: string;
  readonly question?: string;
  readonly holdout?: number;
  readonly seed?: number;
  readonly alpha?: number;
  /** Test only these columns. */
  readonly signals?: readonly string[];
  /** The new run's id (the page chooses it, unique in its store). */
  readonly runId: string;
  readonly codeVersion?: string;
}

export type JobBody = EvalJobBody | InvestigateJobBody | CalibrateJobBody | ExploreJobBody;

/** The job kinds the companion runs. */
export const JOB_KINDS = ["eval", "investigate", "calibrate", "explore"] as const;

/** `POST /jobs` → 202. */
export interface JobAccepted {
  readonly id: string;
  /** Where its stream is, relative to the companion. */
  readonly events: string;
}

/** One write the job made to its store, to be made again in the page's store. */
export type StoreOp =
  | { readonly op: "createRun"; readonly run: RunRecord }
  | {
      readonly op: "updateRun";
      readonly id: string;
      readonly changes: Partial<Pick<RunRecord, "status" | "finishedAt" | "summary" | "config">>;
    }
  | { readonly op: "appendEvents"; readonly runId: string; readonly events: readonly EventRecord[] }
  | { readonly op: "putScores"; readonly scores: readonly ScoreRecord[] }
  | {
      readonly op: "appendItems";
      readonly runId: string;
      readonly items: readonly ItemRecord[];
      readonly progress: Omit<RunProgress, "runId">;
    };

/** One message of a job's stream. `seq` counts from 0; a reconnect asks for the messages after the last it saw. */
export type JobMessage =
  | { readonly seq: number; readonly type: "store"; readonly write: StoreOp }
  | {
      readonly seq: number;
      readonly type: "progress";
      readonly runId?: string;
      readonly stage: string;
      readonly done: number;
      readonly total: number;
    }
  | {
      readonly seq: number;
      readonly type: "end";
      readonly state: "finished" | "cancelled" | "failed";
      readonly runId?: string;
      readonly status?: string;
      readonly summary?: unknown;
      /** An investigation's verdicts, hypothesis by hypothesis. */
      readonly verdicts?: readonly { readonly id: string; readonly verdict: string }[];
      /** A job that stores nothing (a calibration): what it computed. */
      readonly result?: unknown;
      readonly error?: string;
    }
  /** Lessons an investigation recorded, for the page to append to its lessons store (IndexedDB `evalrx-lessons`). */
  | { readonly seq: number; readonly type: "lessons"; readonly runId: string; readonly lessons: readonly Lesson[] };
