import type { RunEvent } from "../../agent/events.ts";
import { DEFAULT_QUESTION, exploreCases, logFingerprint } from "../../agent/run-explore.ts";
import type { ImportedCase } from "../../datasets/index.ts";
import { neutralizeBidi } from "../../report/safe-text.ts";
import { REPORT_SCORE } from "../../../workers/investigate-job.ts";
import type { EvalJobContext } from "./eval-job.ts";
import type { ExploreJobBody } from "./protocol.ts";
import { relayStore } from "./relay-store.ts";

/** The record kind of an explore run (the report page lists it with the investigations). */
export const EXPLORE_KIND = "explore";

/** How many events one store write takes at most. */
const EVENTS_PER_WRITE = 200;

/** The page's stored cases of an eval log, one JSON object a line, each checked: the line and field named. */
export function exploreCasesOf(jsonl: string): ImportedCase[] {
  if (typeof jsonl !== "string") throw new Error("cases: expected the stored cases as JSONL text");
  const out: ImportedCase[] = [];
  for (const [i, line] of jsonl.split("\n").entries()) {
    if (!line.trim()) continue;
    let row: Record<string, unknown>;
    try {
      row = JSON.parse(line) as Record<string, unknown>;
    } catch (error) {
      throw new Error(`cases line ${i + 1}: not JSON (${(error as Error).message})`, { cause: error });
    }
    if (typeof row !== "object" || row === null || typeof row["id"] !== "string" || !row["id"])
      throw new Error(`cases line ${i + 1}: expected an object with a string id`);
    if (row["label"] !== undefined && typeof row["label"] !== "boolean")
      throw new Error(
        `cases line ${i + 1}: label must be true (pass) or false (fail), got ${JSON.stringify(row["label"])}`,
      );
    const meta = row["meta"] ?? {};
    if (typeof meta !== "object" || meta === null || Array.isArray(meta))
      throw new Error(`cases line ${i + 1}: meta must be an object of columns`);
    out.push({
      id: row["id"],
      input: (row["input"] as ImportedCase["input"] | undefined) ?? { prompt: "" },
      expected: (row["expected"] as ImportedCase["expected"]) ?? "",
      tags: Array.isArray(row["tags"]) ? (row["tags"] as string[]) : [],
      split: typeof row["split"] === "string" ? row["split"] : "",
      cluster: typeof row["cluster"] === "string" ? row["cluster"] : row["id"],
      status: "active",
      meta: meta as ImportedCase["meta"],
      ...(row["label"] !== undefined ? { label: row["label"] as boolean } : {}),
    } as ImportedCase);
  }
  if (!out.length) throw new Error("cases: explore needs at least one case");
  return out;
}

/**
 * Runs `evalrx explore` for the page on this machine: the same
 * `exploreCases` (M2–M4, no model) over the eval log the page stores, written
 * as a run of kind `explore` through a relay that hands every write to the
 * page: the run, its event log (the report is folded from it) and its report
 * score, so the page's Reports list opens it as if the page had made it.
 * Cancel stops it at its next event; the run is then marked cancelled.
 *
 * @example await runCompanionExplore({ kind: "explore", cases, source: "log.csv", runId: "explore-1" }, context)
 */
export async function runCompanionExplore(
  body: ExploreJobBody,
  context: EvalJobContext,
): Promise<{ runId: string; status: string; verdicts: { id: string; verdict: string }[] }> {
  if (typeof body.runId !== "string" || !/^[\w.:-]{1,200}$/.test(body.runId))
    throw new Error("runId: expected the new run's id (letters, digits, '.', ':', '_', '-')");
  for (const key of ["holdout", "seed", "alpha"] as const)
    if (body[key] !== undefined && typeof body[key] !== "number")
      throw new Error(`${key}: expected a number, got ${JSON.stringify(body[key])}`);
  if (body.signals !== undefined && (!Array.isArray(body.signals) || body.signals.some((s) => typeof s !== "string")))
    throw new Error("signals: expected a list of column names");
  const cases = exploreCasesOf(body.cases);
  const runId = body.runId;
  if (await context.store.getRun(runId)) throw new Error(`run '${runId}' already exists in the companion's store`);
  const store = relayStore(context.store, context.emit);
  const events: RunEvent[] = [];
  let stages = 0;
  const done = () => events.filter((e) => e.type === "stage.finished").length;
  const run = exploreCases(cases, {
    question: body.question?.trim() || DEFAULT_QUESTION,
    ...(body.holdout !== undefined ? { holdout: body.holdout } : {}),
    seed: body.seed ?? 1,
    alpha: body.alpha ?? 0.05,
    source: String(body.source || "(the page's dataset)"),
    labelColumn: null,
    columns: [...new Set(cases.flatMap((c) => Object.keys(c.meta)))],
    ...(body.signals ? { signals: body.signals } : {}),
    ...(body.codeVersion ? { codeVersion: String(body.codeVersion) } : {}),
    runId,
    sink: (event) => {
      // A Cancel takes effect at the loop's next event.
      context.signal.throwIfAborted();
      events.push(event);
      if (event.type === "stage.started") {
        stages++;
        context.onProgress({ runId, stage: String(event.stage), done: done(), total: 3 });
      }
    },
  });
  const started = new Date().toISOString();
  await store.createRun({
    id: runId,
    kind: EXPLORE_KIND,
    dataset: String(body.source || "—"),
    model: "—",
    fingerprint: logFingerprint(cases),
    status: "running",
    startedAt: started,
    config: { question: body.question ?? DEFAULT_QUESTION, cases: cases.length, ranOn: "companion" },
  });
  let result;
  try {
    result = await run;
  } catch (error) {
    await store.updateRun(runId, {
      status: context.signal.aborted ? "cancelled" : "failed",
      finishedAt: new Date().toISOString(),
    });
    throw error;
  }
  for (let i = 0; i < result.events.length; i += EVENTS_PER_WRITE)
    await store.appendEvents(
      runId,
      result.events
        .slice(i, i + EVENTS_PER_WRITE)
        .map((e) => ({ ts: e.ts, stage: e.stage, schema: e.schema, type: e.type, payload: e.payload })),
    );
  const report = neutralizeBidi(result.report);
  await store.putScores([{ runId, name: REPORT_SCORE, value: report.version, detail: report }]);
  const verdicts: Record<string, number> = {};
  for (const h of report.hypotheses) verdicts[h.verdict] = (verdicts[h.verdict] ?? 0) + 1;
  await store.updateRun(runId, {
    status: "finished",
    finishedAt: new Date().toISOString(),
    summary: { hypotheses: report.hypotheses.length, verdicts, stages, cases: cases.length },
  });
  return { runId, status: "finished", verdicts: report.hypotheses.map((h) => ({ id: h.id, verdict: h.verdict })) };
}
