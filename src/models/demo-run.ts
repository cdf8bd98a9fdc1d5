import type { CaptureOptions, ModelInput, Reduction, Trace } from "../core/model.ts";
import type { Generation, OrtGenerateOptions } from "./ort-model.ts";

/** What `runDemoCases` needs of a model: our runtime in-process, or the worker proxy. */
export interface DemoRunner {
  generateTokens(input: ModelInput, options?: OrtGenerateOptions): Promise<Generation>;
  forward(input: ModelInput, capture?: CaptureOptions): Promise<Trace>;
}

/** One demo case as the runner needs it: the prompt and the image path under `public/demo/`. */
export interface DemoInput {
  readonly id: string;
  readonly prompt: string;
  readonly image?: string;
}

/** A platform-neutral, JSON-friendly result of one case: the greedy answer and the reductions of a teacher-forced forward. */
export interface DemoResult {
  readonly id: string;
  readonly ids: number[];
  readonly text: string;
  readonly tokenIds: number[];
  readonly reductions: Record<string, { shape: number[]; data: (number | null)[] }>;
}

/** The reductions the Node/Chromium parity checks compare. */
export const PARITY_REDUCTIONS: readonly Reduction[] = [
  "imageAttentionShare",
  "attentionEntropy",
  "sinkMass",
  "imageAttentionMap",
  "rollout",
  "tokenEntropy",
  "tokenLogprob",
  "logitLens",
];

/**
 * Runs demo cases the same way on any platform: greedy generation, then one
 * forward with the generated answer teacher-forced and the parity reductions.
 *
 * @example
 * await runDemoCases(model, [{ id: "pope-random-0001", prompt: "<image> is there a red circle ?", image: "images/scene-0001.png" }], readDemo)
 */
export async function runDemoCases(
  model: DemoRunner,
  cases: readonly DemoInput[],
  readImage: (path: string) => Promise<Uint8Array>,
  options: { maxNewTokens?: number; reductions?: readonly Reduction[] } = {},
): Promise<DemoResult[]> {
  const results: DemoResult[] = [];
  for (const c of cases) {
    const input: ModelInput = { prompt: c.prompt, ...(c.image ? { image: await readImage(c.image) } : {}) };
    const generation = await model.generateTokens(input, { maxNewTokens: options.maxNewTokens ?? 8 });
    const reductions = options.reductions ?? PARITY_REDUCTIONS;
    const usable = c.image
      ? reductions
      : reductions.filter((r) => !["imageAttentionShare", "imageAttentionMap", "rollout"].includes(r));
    const trace = await model.forward(input, { answer: generation.text || undefined, reductions: usable });
    const out: DemoResult["reductions"] = {};
    for (const [name, t] of Object.entries(trace.reductions))
      if (t) out[name] = { shape: [...t.shape], data: Array.from(t.data, (v) => (Number.isNaN(v) ? null : v)) };
    results.push({
      id: c.id,
      ids: [...generation.ids],
      text: generation.text,
      tokenIds: Array.from(trace.tokenIds),
      reductions: out,
    });
  }
  return results;
}

/** The largest absolute difference between two runs' reductions, per reduction (ids and texts must match exactly; throws otherwise). */
export function demoDifferences(a: readonly DemoResult[], b: readonly DemoResult[]): Record<string, number> {
  const worst: Record<string, number> = {};
  if (a.length !== b.length)
    throw new Error(`demoDifferences: ${a.length} results vs ${b.length}: run both sides on the same cases`);
  a.forEach((x, i) => {
    const y = b[i]!;
    if (x.id !== y.id || x.ids.join() !== y.ids.join() || x.tokenIds.join() !== y.tokenIds.join())
      throw new Error(`case ${x.id}: different tokens (${x.text} vs ${y.text})`);
    for (const [name, t] of Object.entries(x.reductions)) {
      const u = y.reductions[name];
      if (!u || u.shape.join() !== t.shape.join())
        throw new Error(`case ${x.id}: reduction ${name} missing or shaped differently`);
      t.data.forEach((v, j) => {
        const w = u.data[j]!;
        if ((v === null) !== (w === null)) throw new Error(`case ${x.id}: ${name}[${j}] is NaN on one side only`);
        // Logit-lens ids must match exactly; probabilities and other values within tolerance.
        if (name === "logitLens" && j % 2 === 0 && v !== w)
          throw new Error(`case ${x.id}: logit-lens token differs at ${j}`);
        if (v !== null && w !== null) worst[name] = Math.max(worst[name] ?? 0, Math.abs(v - w));
      });
    }
  });
  return worst;
}

/** The largest absolute difference between two runs' reductions (ids and texts must match exactly; throws otherwise). */
export function compareDemoResults(a: readonly DemoResult[], b: readonly DemoResult[]): number {
  return Math.max(0, ...Object.values(demoDifferences(a, b)));
}
