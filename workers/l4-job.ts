/**
 * L4 in the page's investigation: the head-adapter executor (`executor.browser.ts`, the CLI's code with the
 * page's file I/O) for the model loaded in this worker, its merged folder kept in the page's model store
 * (Cache Storage, beside the folders the user added: `files:<name>` loads it), and its progress — the pool's
 * features, then (step, loss) — as the investigation's progress, so the page shows it like every long job.
 */
import type { FailureCase, ImagePixels, Model } from "../src/core/index.ts";
import { pageL4Executor, type L4Progress, type PageL4 } from "../src/agent/l4/executor.browser.ts";
import type { L4Method } from "../src/agent/l4/executor.ts";
import type { FileSource } from "../src/models/session.ts";
import { ModelFolders } from "../src/ui/app/model-folders.ts";
import type { InvestigationProgress } from "./investigate-job.ts";

/** The training settings a plan may set (`plan.l4`); the rest are the executor's defaults. */
export interface L4TrainSettings {
  /** What L4 trains: `layer` (default: LoRA on the last layer's attention projections) or `head`. */
  readonly method?: L4Method;
  readonly steps?: number;
  readonly learningRate?: number;
  readonly l2?: number;
}

/**
 * `plan.l4`, checked: each wrong field named with what was expected.
 *
 * @example checkL4Settings({ steps: 40, learningRate: 0.05 }) // { steps: 40, learningRate: 0.05 }
 */
export function checkL4Settings(value: unknown): L4TrainSettings {
  if (typeof value !== "object" || value === null)
    throw new Error("plan.l4: expected { method, steps, learningRate, l2 }");
  const v = value as Record<string, unknown>;
  const unknown = Object.keys(v).filter((k) => !["method", "steps", "learningRate", "l2"].includes(k));
  if (unknown.length)
    throw new Error(`plan.l4: unknown field(s) ${unknown.join(", ")}; expected method, steps, learningRate, l2`);
  if (v["method"] !== undefined && v["method"] !== "layer" && v["method"] !== "head")
    throw new Error(`plan.l4.method: expected "layer" or "head", got ${JSON.stringify(v["method"])}`);
  if (v["steps"] !== undefined && !(Number.isInteger(v["steps"]) && (v["steps"] as number) >= 1))
    throw new Error(`plan.l4.steps: expected a whole number of Adam steps ≥ 1, got ${String(v["steps"])}`);
  if (v["learningRate"] !== undefined && !(typeof v["learningRate"] === "number" && v["learningRate"] > 0))
    throw new Error(`plan.l4.learningRate: expected a number > 0, got ${String(v["learningRate"])}`);
  if (v["l2"] !== undefined && !(typeof v["l2"] === "number" && v["l2"] >= 0))
    throw new Error(`plan.l4.l2: expected a number ≥ 0, got ${String(v["l2"])}`);
  return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined)) as L4TrainSettings;
}

/** What one investigation gives the executor. */
export interface PageL4Context {
  readonly runId: string;
  readonly train?: L4TrainSettings;
  readonly images: (ref: string, row: FailureCase) => Promise<Uint8Array | ImagePixels>;
  readonly signal: AbortSignal;
  readonly onProgress: (p: InvestigationProgress) => void;
}

/** Builds the L4 executor of one investigation, or says why L4 only writes the recipe. */
export type PageL4Factory = (context: PageL4Context) => PageL4 | { readonly reason: string };

/**
 * L4's progress as the investigation's: the store run it would be (`<id>-m5-l4`), what it does, and the
 * training's last loss and curve.
 *
 * @example l4InvestigationProgress("inv", { phase: "training", done: 20, total: 300, loss: 0.41, curve }).what
 * // "L4 training LoRA on the last decoder layer's attention projections q, k, v, o (Adam steps)"
 */
export function l4InvestigationProgress(
  runId: string,
  p: L4Progress,
  method: L4Method = "layer",
): InvestigationProgress {
  return {
    run: `${runId}-m5-l4`,
    stage: "M5",
    what:
      p.phase === "features"
        ? "L4 reading the pool's features (one teacher-forced forward per case)"
        : method === "head"
          ? "L4 training LoRA on the language-model head (Adam steps)"
          : "L4 training LoRA on the last decoder layer's attention projections q, k, v, o (Adam steps)",
    done: p.done,
    total: p.total,
    ...(p.phase === "training" ? { training: { loss: p.loss ?? Number.NaN, curve: p.curve } } : {}),
  };
}

/**
 * The L4 factory for `model`, whose folder this worker reads through `files` (`paths`: the files its load read
 * and its spec names). The merged folder is kept as `files:<name>@<run id>`.
 */
export function pageL4(model: Model, files: FileSource, paths: readonly string[]): PageL4Factory {
  const folders = new ModelFolders();
  return (context) =>
    pageL4Executor(model, {
      files,
      paths,
      runId: context.runId,
      images: context.images,
      signal: context.signal,
      ...(context.train?.method ? { method: context.train.method } : {}),
      ...(context.train ? { train: withoutMethod(context.train) } : {}),
      keep: async (name, merged) => {
        await folders.save(
          name,
          [...merged].map(([path, bytes]) => ({ path, file: new Blob([bytes as BlobPart]) })),
        );
        return `files:${name}`;
      },
      onProgress: (p) => context.onProgress(l4InvestigationProgress(context.runId, p, context.train?.method)),
    });
}

function withoutMethod(settings: L4TrainSettings): Omit<L4TrainSettings, "method"> {
  const { method: _method, ...train } = settings;
  return train;
}
