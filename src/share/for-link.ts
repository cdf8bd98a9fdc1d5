/**
 * Fitting a report or a run into a link: the whole thing when it fits, else
 * with per-case detail left out (and the share says what was left out), else
 * a refusal that tells the caller to send a bundle.
 */
import type { Report } from "../report/schema.ts";
import type { ItemRecord, RunExport } from "../store/types.ts";
import { ShareError } from "./errors.ts";
import { encodeShare, MAX_LINK_CHARS } from "./link.ts";
import {
  SHARE_FORMAT,
  SHARE_VERSION,
  checkSharePayload,
  parseRunSummary,
  type Omission,
  type ReportShare,
  type RunShare,
  type SharePayload,
  type SharedItem,
} from "./payload.ts";

/** A share that fits a link: the payload (`1.…`), what it holds and what it left out. */
export interface LinkShare {
  readonly token: string;
  readonly payload: SharePayload;
  readonly omitted: readonly Omission[];
}

/** The report with the named parts left out. */
function slimReport(report: Report, omit: readonly Omission[]): Report {
  let out: Report = report;
  // Reports from before evidence cases (schema 1.0) have no such field: read it by name.
  if (omit.includes("evidence") && hasEvidence(out)) {
    const { evidence: _evidence, ...rest } = out as Report & { evidence?: unknown };
    out = rest as Report;
  }
  if (omit.includes("figures"))
    out = {
      ...out,
      signals: {
        ...out.signals,
        tested: out.signals.tested.map((s) => {
          const { figure: _figure, ...rest } = s;
          return rest;
        }),
      },
    };
  return out;
}

const hasEvidence = (report: Report): boolean => (report as { evidence?: unknown }).evidence !== undefined;

async function firstThatFits(
  attempts: readonly { omit: readonly Omission[]; payload: () => SharePayload }[],
  what: string,
  limit: number,
): Promise<LinkShare> {
  let last = 0;
  for (const attempt of attempts) {
    const payload = attempt.payload();
    const token = await encodeShare(payload);
    if (token.length <= limit) return { token, payload, omitted: attempt.omit };
    last = token.length;
  }
  throw new ShareError(
    "too-big-for-link",
    `${what} takes ${last.toLocaleString("en")} characters as a link even without its per-case detail; a link holds at most ${limit.toLocaleString("en")}. Send the bundle file instead.`,
  );
}

/**
 * The link of a report: whole when it fits in `limit` characters, else
 * without its evidence cases, else without its signal histograms too; a
 * `ShareError("too-big-for-link")` when even that does not fit.
 *
 * @example (await reportLink(report)).omitted // [] or ["evidence"] (a 600-case report: ~20 KB without evidence)
 */
export async function reportLink(report: Report, limit = MAX_LINK_CHARS): Promise<LinkShare> {
  const share = (omitted: Omission[]): ReportShare => ({
    format: SHARE_FORMAT,
    version: SHARE_VERSION,
    kind: "report",
    omitted: omitted.filter((o) => (o === "evidence" ? hasEvidence(report) : true)),
    report: slimReport(report, omitted),
  });
  const attempts: Omission[][] = hasEvidence(report) ? [[], ["evidence"], ["evidence", "figures"]] : [[], ["figures"]];
  return firstThatFits(
    attempts.map((omit) => ({ omit: share(omit).omitted, payload: () => share(omit) })),
    `report '${report.runId}'`,
    limit,
  );
}

function sharedItem(item: ItemRecord): SharedItem {
  return {
    caseId: item.caseId,
    repeat: item.repeat,
    index: item.index,
    output: item.output,
    passed: item.passed,
    checks: item.checks.map((c) => ({
      name: c.name,
      passed: c.passed,
      ...(typeof c["version"] === "string" ? { version: c["version"] } : {}),
      ...(typeof c["errored"] === "boolean" ? { errored: c["errored"] } : {}),
      ...(typeof c.score === "number" ? { score: c.score } : {}),
      ...(typeof c["error"] === "string" ? { error: c["error"] } : {}),
    })),
    ...(item.error !== undefined ? { error: item.error } : {}),
    latencyMs: item.latencyMs,
  };
}

/**
 * The share of a run file: its record, its summary's numbers and, with
 * `items`, every item (checks reduced to what a verdict needs); without
 * items the plan (every case's id and hash) is left out too and the share
 * says `omitted: ["items"]`. What a link of the run carries, and what the
 * share page shows of a bundle's run.
 *
 * @example runShare(exported, true).items!.length // 600
 */
export function runShare(exported: RunExport, items: boolean): RunShare {
  const { run } = exported;
  // The summary's numbers only (its fingerprint repeats the plan's per-case hashes).
  const summary = parseRunSummary(JSON.parse(JSON.stringify(run.summary ?? null)));
  const record = {
    id: run.id,
    kind: run.kind,
    dataset: run.dataset,
    model: run.model,
    fingerprint: run.fingerprint,
    status: run.status,
    startedAt: run.startedAt,
    ...(run.finishedAt ? { finishedAt: run.finishedAt } : {}),
  };
  const envelope = { format: SHARE_FORMAT, version: SHARE_VERSION, kind: "run" } as const;
  if (items)
    return {
      ...envelope,
      omitted: [],
      run: { ...record, config: { ...run.config } },
      ...(summary ? { summary } : {}),
      items: exported.items.map(sharedItem),
    };
  const { cases: _cases, fingerprint: _fingerprint, ...config } = run.config as Record<string, unknown>;
  return { ...envelope, omitted: ["items"], run: { ...record, config }, ...(summary ? { summary } : {}) };
}

/**
 * The link of a run (from its run file): its record, summary and every
 * item when they fit in `limit` characters, else the record and summary
 * alone (the per-case plan left out too); a `ShareError("too-big-for-link")`
 * when even that does not fit.
 *
 * @example (await runLink(exported)).omitted // [] for a 600-case run, ["items"] for a 100k-case one
 */
export async function runLink(exported: RunExport, limit = MAX_LINK_CHARS): Promise<LinkShare> {
  const share = await firstThatFits(
    [
      { omit: [], payload: () => runShare(exported, true) },
      { omit: ["items"], payload: () => runShare(exported, false) },
    ],
    `run '${exported.run.id}'`,
    limit,
  );
  // What the reader will check, checked here first: a run whose items do not match its plan makes no link.
  checkSharePayload(JSON.parse(JSON.stringify(share.payload)));
  return share;
}
