/**
 * A report as what a reader sees: its sections in order, their paragraphs,
 * tables of typed cells and figures (scenes from `src/figures`), built once
 * from the `Report` data. The page (`src/ui/pages/report/`) renders this view
 * with links, tooltips and controls; the HTML export (`html.ts`) serializes
 * the same view into one self-contained file. Section order, verdict tones,
 * number formats and figure choice live here and nowhere else.
 *
 * Everything in the view is plain data (no functions, no DOM), so it can be
 * built in a worker, and every string in it is text to be escaped by the
 * renderer (the report is untrusted).
 */
import { attentionGrid } from "../figures/attention-grid.ts";
import { attentionOverlay } from "../figures/attention-overlay.ts";
import { forest, type ForestRow } from "../figures/forest.ts";
import { count, decimal, duration, eValue, percent, points, pValue } from "../figures/format.ts";
import { netEffect, netText, repairLadder } from "../figures/repair-ladder.ts";
import type { Scene } from "../figures/scene.ts";
import { signalDistributions, type SignalDistribution } from "../figures/signal-distributions.ts";
import { lessonsSection, modesSection, probeSearchSection } from "./modes-view.ts";
import type { Report, ReportEvidenceCase, ReportHypothesis, ReportRepair, ReportSignal } from "./schema.ts";
import { agenticSection, analysesSection } from "./agentic-view.ts";

/** What a colour means: always drawn with a word (a verdict, "yes"), never alone. */
export type Tone = "pass" | "fail" | "warn" | "neutral";

/** How a number cell was formatted (the text is already in the cell; renderers may align by it). */
export type NumberFormat = "decimal" | "percent" | "points" | "pValue" | "count" | "eValue" | "duration";

/** One table cell, typed so renderers can align numbers, colour verdicts and draw figures. */
export type Cell =
  | { readonly kind: "text"; readonly text: string; readonly code?: boolean; readonly sub?: string }
  | { readonly kind: "number"; readonly value: number | null; readonly format: NumberFormat; readonly text: string }
  | { readonly kind: "verdict"; readonly verdict: string; readonly tone: Tone; readonly text: string }
  | { readonly kind: "badge"; readonly tone: Tone; readonly text: string }
  | { readonly kind: "figure"; readonly figure: FigureView };

export interface ColumnView {
  readonly label: string;
  readonly align?: "left" | "right";
}

export interface TableView {
  /** Stable id (for tests and anchors). */
  readonly id: string;
  readonly caption: string;
  readonly columns: readonly ColumnView[];
  readonly rows: readonly { readonly key: string; readonly cells: readonly Cell[] }[];
}

/** A figure: its scene (which carries its own table, the text alternative) and a title above it. */
export interface FigureView {
  readonly id: string;
  readonly title: string;
  readonly scene: Scene;
  /** A sentence under the figure: how to read it. */
  readonly caption?: string;
}

/** A run of text with an emphasis: bold, code, or a tone (coloured, and always a word). */
export interface Span {
  readonly text: string;
  readonly strong?: boolean;
  readonly code?: boolean;
  readonly tone?: Tone;
}

/** One evidence case: what the model saw, said and should have said, and where it looked. */
export interface EvidenceCaseView {
  readonly key: string;
  readonly id: string;
  readonly passed: boolean;
  readonly prompt: string;
  readonly answer: string;
  readonly expected: string;
  /** The hypothesis' signal on this case, formatted. */
  readonly value: string;
  readonly split?: string;
  /** `src`: a data URL from the report; otherwise the page looks the `hash` up in its store. */
  readonly image?: { readonly src?: string; readonly hash?: string; readonly ref: string; readonly alt: string };
  /** The attention overlay: the grid (to redraw it at another opacity) and its scene at the default one. */
  readonly overlay?: {
    readonly rows: number;
    readonly cols: number;
    readonly values: readonly (number | null)[];
    readonly size: number;
    readonly scene: Scene;
  };
}

export interface EvidenceView {
  readonly id: string;
  readonly hypothesis: string;
  readonly signal: string;
  /** What each case's value is (default "Signal value"). */
  readonly valueLabel?: string;
  readonly groups: readonly {
    readonly title: string;
    readonly passed: boolean;
    readonly cases: readonly EvidenceCaseView[];
  }[];
}

export type Block =
  | { readonly kind: "paragraph"; readonly spans: readonly Span[]; readonly small?: boolean }
  | {
      readonly kind: "facts";
      readonly id: string;
      readonly items: readonly { readonly label: string; readonly value: Cell }[];
    }
  | { readonly kind: "table"; readonly table: TableView }
  | { readonly kind: "figure"; readonly figure: FigureView }
  | { readonly kind: "list"; readonly items: readonly (readonly Span[])[] }
  | { readonly kind: "note"; readonly tone: Tone; readonly spans: readonly Span[] }
  | { readonly kind: "code"; readonly label: string; readonly text: string }
  | { readonly kind: "evidence"; readonly evidence: EvidenceView };

export interface SectionView {
  /** Stable id: the anchor (`#verdicts`) and the test hook (`section-verdicts`). */
  readonly id: string;
  readonly title: string;
  readonly blocks: readonly Block[];
  readonly sections: readonly SectionView[];
}

export interface ReportHeaderView {
  readonly title: string;
  readonly question: string;
  readonly runId: string;
  readonly complete: boolean;
  /** The answer in one or two sentences. */
  readonly headline: readonly Span[];
  /** How many hypotheses got each verdict (each with its tone), in a fixed order. */
  readonly verdicts: readonly { readonly verdict: string; readonly count: number; readonly tone: Tone }[];
  readonly facts: readonly { readonly label: string; readonly value: Cell }[];
}

export interface ReportView {
  readonly title: string;
  readonly header: ReportHeaderView;
  readonly sections: readonly SectionView[];
  /** The figure width the view was built for, in px. */
  readonly width: number;
}

export interface ReportViewOptions {
  /** Width of the figures in px (default 960: the export's column; the page passes its own). */
  readonly width?: number;
  /** Side of an evidence case's image and overlay in px (default 160). */
  readonly overlaySize?: number;
  /** The overlay's opacity at its strongest cell (default 0.6). */
  readonly opacity?: number;
}

// —— cells ————————————————————————————————————————————————————————————————

const FORMATS: Readonly<Record<NumberFormat, (x: number | null | undefined) => string>> = {
  decimal,
  percent,
  points,
  pValue,
  count,
  eValue,
  duration,
};

/**
 * A number cell: the value, how it is formatted, and the text (a non-finite value reads "—").
 *
 * @example numberCell(0.00004, "pValue") // { kind: "number", value: 0.00004, format: "pValue", text: "< 0.001" }
 */
export function numberCell(value: number | null | undefined, format: NumberFormat): Cell {
  const v = typeof value === "number" && Number.isFinite(value) ? value : null;
  return { kind: "number", value: v, format, text: FORMATS[format](v) };
}

const textCell = (text: string, extra: { code?: boolean; sub?: string } = {}): Cell => ({
  kind: "text",
  text,
  ...(extra.code ? { code: true } : {}),
  ...(extra.sub ? { sub: extra.sub } : {}),
});

/**
 * The tone of a verdict (hypotheses: SUPPORTED / REFUTED / INCONCLUSIVE).
 *
 * @example verdictTone("REFUTED") // "fail"
 */
export function verdictTone(verdict: string): Tone {
  return verdict === "SUPPORTED"
    ? "pass"
    : verdict === "REFUTED"
      ? "fail"
      : verdict === "INCONCLUSIVE"
        ? "warn"
        : "neutral";
}

const verdictCell = (verdict: string): Cell => ({
  kind: "verdict",
  verdict,
  tone: verdictTone(verdict),
  text: verdict,
});
const badge = (text: string, tone: Tone): Cell => ({ kind: "badge", text, tone });

/** An L4 candidate's training in a few words (pool, loss, where the merged model is), or why it failed. */
function trainedNote(training: Readonly<Record<string, unknown>> | undefined): string {
  if (!training) return "";
  if (typeof training["failed"] === "string") return `; ${training["failed"]}`;
  const pool = training["pool"] as { cases?: number } | undefined;
  const loss = (x: unknown) => (typeof x === "number" ? x.toFixed(3) : "—");
  return `; trained on ${pool?.cases ?? "—"} pool cases, loss ${loss(training["initialLoss"])} → ${loss(training["finalLoss"])}, merged model ${String(training["weights"] ?? "—")}`;
}
const interval = (lo: number | null | undefined, hi: number | null | undefined) => `[${decimal(lo)}, ${decimal(hi)}]`;
const effectText = (e: { name: string; value: number | null }) => `${e.name} ${decimal(e.value)}`;
const span = (text: string, extra: Omit<Span, "text"> = {}): Span => ({ text, ...extra });
const plural = (n: number, one: string, many = `${one}s`) => `${count(n)} ${n === 1 ? one : many}`;
const testUnit = (test: string | undefined, unit: string | undefined, clusters: number | undefined) =>
  `${test ?? "—"} (${unit ?? "case"}${clusters !== undefined ? `, ${count(clusters)} clusters` : ""})`;

// —— sections ————————————————————————————————————————————————————————————

const VERDICTS = ["SUPPORTED", "REFUTED", "INCONCLUSIVE"] as const;

function header(report: Report): ReportHeaderView {
  const p = report.provenance;
  const hs = report.hypotheses;
  const verdicts = VERDICTS.map((v) => ({
    verdict: v,
    count: hs.filter((h) => h.verdict === v).length,
    tone: verdictTone(v),
  }));
  const supported = verdicts[0]!.count;
  const headline: Span[] = [];
  if (hs.length === 0)
    headline.push(
      span(
        report.signals.tried === 0 && report.signals.tested.length === 0
          ? "No hypothesis: no signal was tested on the exploration split, so nothing was decided."
          : "No hypothesis: no signal passed the screen on the exploration split, so nothing was decided.",
      ),
    );
  else {
    headline.push(
      span(`${count(supported)} of ${plural(hs.length, "hypothesis", "hypotheses")} `),
      span("SUPPORTED", { strong: true, tone: "pass" }),
      span(
        ` on the sealed split${p.holdout ? ` (${plural(p.holdout.sealedN, "case")})` : ""}` +
          (verdicts[1]!.count ? `, ${count(verdicts[1]!.count)} REFUTED` : "") +
          (verdicts[2]!.count ? `, ${count(verdicts[2]!.count)} INCONCLUSIVE` : "") +
          ".",
      ),
    );
  }
  if (report.repairs) {
    const r = report.repairs;
    headline.push(
      span(" "),
      r.fixedBy
        ? span(`Fixed by ${r.fixedBy} (validated against the baseline).`, { strong: true, tone: "pass" })
        : span(`No repair validated up to ${r.maxTier}.`),
    );
  }
  const model = p.model && typeof p.model["key"] === "string" ? String(p.model["key"]) : undefined;
  return {
    title: `EvalRx ${report.kind} report`,
    question: report.question,
    runId: report.runId,
    complete: report.complete,
    headline,
    verdicts,
    facts: [
      { label: "Run", value: textCell(report.runId, { code: true }) },
      {
        label: "Data",
        value: textCell(`${p.data.source || "—"} · ${plural(p.data.n, "case")}`, {
          // A run that ended before M1 (a judge that never probed) labelled nothing: not "0 fail (0.0%)".
          sub:
            p.data.labelDistribution.fail + p.data.labelDistribution.pass > 0
              ? `${count(p.data.labelDistribution.fail)} fail (${percent(p.data.labelDistribution.fail / (p.data.labelDistribution.fail + p.data.labelDistribution.pass))})`
              : "not labelled",
        }),
      },
      ...(model ? [{ label: "Model", value: textCell(model, { code: true }) }] : []),
      {
        label: report.finishedAt ? "Finished" : "Started",
        value: textCell((report.finishedAt ?? report.createdAt).replace("T", " ").replace(/\.\d+Z$/, " UTC")),
      },
    ],
  };
}

function forestRows(hs: readonly ReportHypothesis[]): ForestRow[] {
  return hs.map((h) => ({
    id: h.id,
    label: `${h.id} ${h.signal}: ${h.direction}${h.merged?.length ? ` (merged: ${h.merged.map((m) => m.signal).join(", ")})` : ""}`,
    effect: h.exploreEffect.name,
    nullValue: h.exploreEffect.nullValue,
    explore: { value: h.exploreEffect.value, lo: h.exploreEffect.lo, hi: h.exploreEffect.hi },
    sealed: h.sealedEffect ? { value: h.sealedEffect.value, lo: h.sealedEffect.lo, hi: h.sealedEffect.hi } : null,
    ebh: h.gates ? h.gates.statistical.eBH : null,
    verdict: h.verdict,
  }));
}

function verdictsSection(report: Report, width: number): SectionView {
  const hs = report.hypotheses;
  const blocks: Block[] = [];
  if (hs.length === 0) {
    blocks.push({
      kind: "note",
      tone: "neutral",
      spans: [
        span(
          report.signals.tried === 0 && report.signals.tested.length === 0
            ? "No hypothesis: the run tested no signal on the exploration split, so the sealed split stays unread."
            : `No hypothesis: no signal passed the screen on the exploration split${report.problems.length ? " (see “What could not be tested, and why”)" : ""}, so the sealed split stays unread.`,
        ),
      ],
    });
    return { id: "verdicts", title: "Verdicts on the sealed split (M4)", blocks, sections: [] };
  }
  blocks.push({
    kind: "paragraph",
    spans: [
      span(
        "Each hypothesis was stated and frozen on the exploration split, then decided once on the sealed split: SUPPORTED needs its one-sided sealed test in the stated direction with an e-value that survives e-BH at α; REFUTED means the sealed interval does not reach the distance the exploration split promised.",
      ),
    ],
  });
  blocks.push({
    kind: "figure",
    figure: {
      id: "forest",
      title: "Effects with 95% intervals, exploration vs sealed",
      scene: forest(forestRows(hs), { width }),
      caption:
        "One panel per effect kind, each on its own scale: grey is where the hypothesis was chosen (inflated by selection), blue is where it was decided.",
    },
  });
  blocks.push({
    kind: "table",
    table: {
      id: "hypotheses",
      caption: "Hypotheses and their sealed verdicts",
      columns: [
        { label: "Id" },
        { label: "Signal" },
        { label: "Direction" },
        { label: "Exploration effect", align: "right" },
        { label: "Sealed n", align: "right" },
        { label: "Test (unit)" },
        { label: "Sealed effect [95%]", align: "right" },
        { label: "e-value", align: "right" },
        { label: "Verdict" },
      ],
      rows: hs.map((h) => ({
        key: h.id,
        cells: [
          textCell(h.id),
          textCell(h.signal, {
            code: true,
            ...(h.merged?.length ? { sub: `merged: ${h.merged.map((m) => m.signal).join(", ")}` } : {}),
          }),
          textCell(h.direction),
          textCell(effectText(h.exploreEffect)),
          numberCell(h.sealedN, "count"),
          textCell(testUnit(h.test, h.unit, h.clusters)),
          textCell(
            h.sealedEffect ? `${decimal(h.sealedEffect.value)} ${interval(h.sealedEffect.lo, h.sealedEffect.hi)}` : "—",
          ),
          numberCell(h.eValue, "eValue"),
          verdictCell(h.verdict),
        ],
      })),
    },
  });
  const merged = hs.filter((h) => h.merged?.length);
  if (merged.length)
    blocks.push({
      kind: "note",
      tone: "neutral",
      spans: [
        span("Merged in M3 as the same measurement: ", { strong: true }),
        span(
          merged
            .map(
              (h) =>
                `${h.id} ${h.signal} also stands for ${h.merged!.map((m) => `${m.signal} (${m.relation})`).join(", ")}`,
            )
            .join("; ") +
            ". They gave the same order of cases on the exploration split, so they count as one hypothesis.",
        ),
      ],
    });
  return { id: "verdicts", title: "Verdicts on the sealed split (M4)", blocks, sections: [] };
}

export function evidenceCaseView(
  report: Report,
  c: ReportEvidenceCase,
  key: string,
  size: number,
  opacity: number,
): EvidenceCaseView {
  const evidence = report.evidence!;
  const grid = evidence.grid;
  const hash = c.image?.hash;
  const data = hash ? evidence.images[hash] : undefined;
  const image = c.image
    ? {
        ...(data ? { src: data.dataUrl } : {}),
        ...(hash ? { hash } : {}),
        ref: c.image.ref,
        alt: `the image of case ${c.id}`,
      }
    : undefined;
  const overlay =
    grid && c.attention && c.attention.length === grid.rows * grid.cols && grid.rows >= 1 && grid.cols >= 1
      ? {
          rows: grid.rows,
          cols: grid.cols,
          values: c.attention,
          size,
          scene: attentionOverlay(c.attention, {
            width: size,
            rows: grid.rows,
            cols: grid.cols,
            opacity,
            label: `attention of case ${c.id}`,
          }),
        }
      : undefined;
  return {
    key,
    id: c.id,
    passed: c.passed,
    prompt: c.prompt,
    answer: c.answer,
    expected: c.expected ?? "—",
    value: decimal(c.value),
    ...(c.split !== undefined ? { split: c.split } : {}),
    ...(image ? { image } : {}),
    ...(overlay ? { overlay } : {}),
  };
}

function hypothesesSection(report: Report, size: number, opacity: number): SectionView | undefined {
  const hs = report.hypotheses;
  if (!hs.length) return undefined;
  const evidence = report.evidence;
  const sections = hs.map((h): SectionView => {
    const blocks: Block[] = [
      { kind: "paragraph", spans: [span(h.statement)] },
      {
        kind: "paragraph",
        spans: [span(`${h.verdict}: `, { strong: true, tone: verdictTone(h.verdict) }), span(h.reason)],
      },
      { kind: "paragraph", spans: [span("What would refute it: ", { strong: true }), span(h.refutation)] },
    ];
    if (h.merged?.length)
      blocks.push({
        kind: "paragraph",
        spans: [
          span("Merged: ", { strong: true }),
          span(h.merged.map((m) => `${m.signal} (${m.relation})`).join(", ")),
          span(" — the same measurement on the exploration split, counted once."),
        ],
      });
    blocks.push({
      kind: "paragraph",
      small: true,
      spans: [
        span(
          `Evidence chain: stated at event #${h.evidence.stated}, frozen at #${h.evidence.frozen ?? "—"}, sealed split opened at #${h.evidence.sealedOpened ?? "—"}, decided at #${h.evidence.decided ?? "—"}. Test: ${h.testDescription ?? h.test}${h.eMethod ? `; ${h.eMethod}` : ""}. Mechanism written by ${h.author}.`,
        ),
      ],
    });
    const cases = evidence?.hypotheses.find((e) => e.hypothesis === h.id);
    if (cases) {
      const groups = [
        { title: "Failing cases where the signal points this way most", passed: false, list: cases.failing },
        { title: "Passing cases where it points the other way most", passed: true, list: cases.passing },
      ]
        .filter((g) => g.list.length)
        .map((g) => ({
          title: g.title,
          passed: g.passed,
          cases: g.list.map((c, i) =>
            evidenceCaseView(report, c, `${h.id}|${g.passed ? "pass" : "fail"}|${i}|${c.id}`, size, opacity),
          ),
        }));
      if (groups.length)
        blocks.push({
          kind: "evidence",
          evidence: { id: `evidence-${h.id}`, hypothesis: h.id, signal: h.signal, groups },
        });
    }
    return { id: `hypothesis-${h.id}`, title: `${h.id}: ${h.mechanism}`, blocks, sections: [] };
  });
  const blocks: Block[] = [];
  if (evidence)
    blocks.push({
      kind: "paragraph",
      small: true,
      spans: [
        span(`Cases shown: ${evidence.note ?? `from the ${evidence.split} split`}.`),
        ...(evidence.grid?.what ? [span(` The overlay is the ${evidence.grid.what}.`)] : []),
      ],
    });
  else
    blocks.push({
      kind: "paragraph",
      small: true,
      spans: [span("This report carries no evidence cases (it was written before they were added, or by `explore`).")],
    });
  return { id: "hypotheses", title: "Hypotheses and the cases behind them (M3)", blocks, sections };
}

function signalNote(s: ReportSignal, h: ReportHypothesis | undefined, into: ReportHypothesis | undefined): string {
  if (into) return `merged into ${into.id} (the same measurement) · ${effectText(s.effect)}`;
  return `${h ? `${h.id} · ` : ""}${effectText(s.effect)}${h ? `, ${h.direction}` : ""}`;
}

function signalsSection(report: Report, width: number): SectionView | undefined {
  const sig = report.signals;
  // Left out when no signal was tried (a judge-decided run that never ran the statistics).
  if (sig.tried === 0 && sig.tested.length === 0 && !sig.layers?.length) return undefined;
  const blocks: Block[] = [
    {
      kind: "paragraph",
      spans: [
        span(`${plural(sig.tried, "signal")} tried on the exploration split; `),
        span(sig.procedure),
        span(`. Selected: ${sig.selected.join(", ") || "none"}.`),
      ],
    },
  ];
  // The distributions of the signals that became hypotheses, then the other selected ones.
  const hypothesisOf = new Map(report.hypotheses.map((h) => [h.signal, h]));
  const mergedInto = new Map(report.hypotheses.flatMap((h) => (h.merged ?? []).map((m) => [m.signal, h] as const)));
  const shown = sig.tested
    .filter((s) => s.figure && (hypothesisOf.has(s.signal) || s.selected))
    .sort((a, b) => Number(hypothesisOf.has(b.signal)) - Number(hypothesisOf.has(a.signal)))
    .slice(0, 12);
  if (shown.length)
    blocks.push({
      kind: "figure",
      figure: {
        id: "signal-distributions",
        title: "Failing and passing cases on each selected signal",
        scene: signalDistributions(
          shown.map((s): SignalDistribution => ({
            signal: s.signal,
            note: signalNote(s, hypothesisOf.get(s.signal), mergedInto.get(s.signal)),
            data: s.figure!,
          })),
          { width },
        ),
        caption:
          "Histograms show the share of each group's cases per bin (so 50 failures and 300 passes compare); binary signals show the failure rate where the signal is present and where it is absent.",
      },
    });
  const byP = [...sig.tested].sort((a, b) => (a.p ?? Infinity) - (b.p ?? Infinity) || (a.signal < b.signal ? -1 : 1));
  blocks.push({
    kind: "table",
    table: {
      id: "signals",
      caption: "Every signal tested on the exploration split, smallest p first",
      columns: [
        { label: "Signal" },
        { label: "Kind" },
        { label: "Test (unit)" },
        { label: "n", align: "right" },
        { label: "Effect", align: "right" },
        { label: "95% interval", align: "right" },
        { label: "p", align: "right" },
        { label: "e", align: "right" },
        { label: "Screen" },
      ],
      rows: byP.map((s) => ({
        key: s.signal,
        cells: [
          textCell(s.signal, { code: true }),
          textCell(s.kind),
          textCell(testUnit(s.test, s.unit, s.clusters)),
          numberCell(s.n, "count"),
          textCell(effectText(s.effect)),
          textCell(interval(s.effect.lo, s.effect.hi)),
          numberCell(s.p, "pValue"),
          numberCell(s.e, "eValue"),
          s.selected ? badge("selected", "pass") : s.untestable ? textCell(s.untestable) : textCell("not selected"),
        ],
      })),
    },
  });
  const sections: SectionView[] = [];
  if (sig.layers?.length)
    sections.push({
      id: "layers",
      title: "Across layers (Friedman, exploration split; descriptive)",
      blocks: [
        {
          kind: "table",
          table: {
            id: "layers",
            caption: "Layered signals compared across layers",
            columns: [
              { label: "Signal" },
              { label: "Layers" },
              { label: "n", align: "right" },
              { label: "Friedman χ²", align: "right" },
              { label: "p", align: "right" },
              { label: "AUC per layer" },
              { label: "Strongest" },
            ],
            rows: sig.layers.map((l) => ({
              key: l.family,
              cells: [
                textCell(l.family, { code: true }),
                textCell(l.layers.join(", ")),
                numberCell(l.n, "count"),
                numberCell(l.statistic, "decimal"),
                numberCell(l.p, "pValue"),
                textCell(l.auc.map((a) => decimal(a)).join(", ")),
                textCell(l.strongest),
              ],
            })),
          },
        },
      ],
      sections: [],
    });
  return { id: "signals", title: "Signals on the exploration split (M2)", blocks, sections };
}

function probeSection(report: Report, width: number): SectionView | undefined {
  const pr = report.probe;
  if (!pr) return undefined;
  const blocks: Block[] = [
    {
      kind: "paragraph",
      spans: [
        span(
          `${plural(pr.cases, "case")} labelled and probed; ${count(pr.failures)} fail (${percent(pr.failures / Math.max(1, pr.cases))}); model kind ${pr.modelKind}.`,
        ),
      ],
    },
  ];
  const sections: SectionView[] = [];
  if (pr.pope?.length)
    sections.push({
      id: "pope",
      title: "POPE by split",
      blocks: [
        {
          kind: "table",
          table: {
            id: "pope",
            caption: "POPE metrics per split (yes is the positive answer)",
            columns: [
              { label: "Split" },
              { label: "n", align: "right" },
              { label: "Accuracy", align: "right" },
              { label: "Precision", align: "right" },
              { label: "Recall", align: "right" },
              { label: "F1", align: "right" },
              { label: "Yes-ratio", align: "right" },
              { label: "Unknown", align: "right" },
            ],
            rows: pr.pope.map((s) => ({
              key: s.split,
              cells: [
                textCell(s.split),
                numberCell(s.n, "count"),
                numberCell(s.accuracy, "percent"),
                numberCell(s.precision, "percent"),
                numberCell(s.recall, "percent"),
                numberCell(s.f1, "percent"),
                numberCell(s.yesRatio, "percent"),
                numberCell(s.unknownShare, "percent"),
              ],
            })),
          },
        },
        {
          kind: "paragraph",
          small: true,
          spans: [
            span(
              "A yes-ratio far from the share of questions whose answer is yes (half, in POPE) is a bias toward one answer; the adversarial split asks about objects that often co-occur with what is in the image.",
            ),
          ],
        },
      ],
      sections: [],
    });
  if (pr.chair)
    sections.push({
      id: "chair",
      title: "CHAIR (object hallucination in captions)",
      blocks: [
        pr.chair.captions > 0
          ? {
              kind: "facts",
              id: "chair",
              items: [
                { label: "Captions", value: numberCell(pr.chair.captions, "count") },
                {
                  label: "CHAIR_i (objects mentioned that are not there)",
                  value: numberCell(pr.chair.chairI, "percent"),
                },
                { label: "CHAIR_s (captions with one or more)", value: numberCell(pr.chair.chairS, "percent") },
              ],
            }
          : {
              kind: "note",
              tone: "neutral",
              spans: [
                span("No caption cases in this run (CHAIR needs cases whose meta.objects lists what is in the image)."),
              ],
            },
      ],
      sections: [],
    });
  if (pr.maps && pr.maps.fail.length === pr.maps.rows * pr.maps.cols && pr.maps.pass.length === pr.maps.fail.length)
    blocks.push({
      kind: "figure",
      figure: {
        id: "attention-grid",
        title: "Where the model looks on the image: failing vs passing cases",
        scene: attentionGrid(
          [
            { label: "failing cases (mean)", values: pr.maps.fail },
            { label: "passing cases (mean)", values: pr.maps.pass },
          ],
          { width, rows: pr.maps.rows, cols: pr.maps.cols, valueLabel: "attention rollout" },
        ),
        caption: "Mean attention rollout from the last prompt position to each image patch, on one colour scale.",
      },
    });
  blocks.push({
    kind: "table",
    table: {
      id: "analyzers",
      caption: "Analyzers, ranked by the question's hints",
      columns: [
        { label: "Analyzer" },
        { label: "Rank", align: "right" },
        { label: "Tags" },
        { label: "Ran" },
        { label: "Finding" },
      ],
      rows: pr.analyzers.map((a) => ({
        key: a.name,
        cells: [
          textCell(a.name, { code: true }),
          numberCell(a.rank, "count"),
          textCell(a.tags.join(", ")),
          a.ran ? badge("ran", "pass") : textCell(`no: ${a.reason ?? ""}`),
          textCell(pr.findings.find((f) => f.analyzer === a.name)?.summary ?? "—"),
        ],
      })),
    },
  });
  return { id: "probe", title: "Probe (M1)", blocks, sections };
}

function mechanismSection(report: Report): SectionView | undefined {
  const iv = report.intervention;
  if (!iv) return undefined;
  return {
    id: "mechanism",
    title: "Mechanism test (M5)",
    blocks: [
      { kind: "paragraph", spans: [span(iv.description)] },
      {
        kind: "facts",
        id: "mechanism",
        items: [
          { label: "Hypothesis", value: textCell(iv.hypothesis) },
          { label: "Cases", value: numberCell(iv.n, "count") },
          {
            label: "Failures",
            value: textCell(`${count(iv.baselineFailures)} → ${count(iv.interventionFailures)} with the intervention`),
          },
          {
            label: "Net change",
            value: numberCell(iv.n > 0 ? (iv.baselineFailures - iv.interventionFailures) / iv.n : null, "points"),
          },
          { label: "Test (unit)", value: textCell(testUnit(iv.test ?? "mcnemar", iv.unit, iv.clusters)) },
          { label: "p", value: numberCell(iv.p, "pValue") },
          { label: "e", value: numberCell(iv.e, "eValue") },
          ...(iv.yesRatio !== undefined
            ? [
                {
                  label: "Yes-ratio",
                  value: textCell(`${percent(iv.baselineYesRatio ?? null)} → ${percent(iv.yesRatio)}`),
                },
              ]
            : []),
          { label: "Causal", value: iv.causal ? badge("yes", "pass") : badge("not shown", "neutral") },
        ],
      },
      { kind: "paragraph", spans: [span(iv.note)] },
      ...(iv.cases ? [{ kind: "paragraph" as const, small: true, spans: [span(`Cases: ${iv.cases}.`)] }] : []),
    ],
    sections: [],
  };
}

function repairsSection(report: Report, width: number): SectionView | undefined {
  const r = report.repairs;
  if (!r) return undefined;
  const blocks: Block[] = [];
  if (r.cases || r.budget)
    blocks.push({
      kind: "paragraph",
      small: true,
      spans: [
        span(
          `${r.cases ? `Cases: ${r.cases}. ` : ""}${r.budget ? (r.budget.note ? `One α budget: ${r.budget.note}.` : `One α budget over M5: ${r.budget.tests} tests at γ = α/${r.budget.tests} = ${decimal(r.budget.gamma)} each.`) : ""}`,
        ),
      ],
    });
  if (r.candidates.length)
    blocks.push({
      kind: "figure",
      figure: {
        id: "repair-ladder",
        title: "Each repair's net effect: harm to the left, help to the right",
        scene: repairLadder(
          r.candidates.map((c) => ({
            tier: c.tier,
            candidate: c.candidate,
            n: c.n,
            fixed: c.fixed,
            broken: c.broken,
            validated: c.validated,
            p: c.p,
            ...(c.control
              ? { control: { fixed: c.control.fixed, broken: c.control.broken, beaten: c.control.beaten } }
              : {}),
          })),
          { width },
        ),
        caption:
          "Bars are (fixed − broken) / n against the unmodified baseline on the same cases; a dashed tick is the yes-bias control a yes/no repair must beat.",
      },
    });
  const yes = (c: ReportRepair) =>
    c.yesRatio !== undefined ? `${percent(c.baselineYesRatio ?? null)} → ${percent(c.yesRatio)}` : "—";
  blocks.push({
    kind: "table",
    table: {
      id: "repairs",
      caption: "Repair candidates against the baseline",
      columns: [
        { label: "Tier" },
        { label: "Candidate" },
        { label: "n", align: "right" },
        { label: "Fixed", align: "right" },
        { label: "Broken", align: "right" },
        { label: "Net", align: "right" },
        { label: "Test (unit)" },
        { label: "p", align: "right" },
        { label: "e", align: "right" },
        { label: "Yes-ratio" },
        { label: "Yes-bias control" },
        { label: "Validated" },
      ],
      rows: r.candidates.map((c) => ({
        key: `${c.tier}|${c.candidate}`,
        cells: [
          textCell(c.tier),
          textCell(c.candidate, { sub: c.description + trainedNote(c.training) }),
          numberCell(c.n, "count"),
          numberCell(c.fixed, "count"),
          numberCell(c.broken, "count"),
          { ...numberCell(netEffect(c), "points"), ...(netEffect(c) === 0 ? { text: netText(0) } : {}) },
          textCell(testUnit(c.test ?? "mcnemar", c.unit, c.clusters)),
          numberCell(c.p, "pValue"),
          numberCell(c.e, "eValue"),
          textCell(yes(c)),
          c.control
            ? textCell(c.control.beaten ? "beaten" : "not beaten", {
                sub: `fixed ${count(c.control.fixed)} / broken ${count(c.control.broken)}, p ${pValue(c.control.p)}`,
              })
            : textCell("—"),
          c.noFreeLunch
            ? textCell(c.validated ? "yes" : "no", {
                sub: `no-free-lunch ${c.noFreeLunch.holds ? "held" : "failed"}: ${c.noFreeLunch.note}`,
              })
            : c.validated
              ? badge("yes", "pass")
              : textCell("no"),
        ],
      })),
    },
  });
  const splits = [...new Set(r.candidates.flatMap((c) => Object.keys(c.bySplit ?? {})))];
  if (splits.length)
    blocks.push({
      kind: "table",
      table: {
        id: "repairs-by-split",
        caption: "Fixed / broken per split",
        columns: [{ label: "Candidate" }, ...splits.map((s) => ({ label: s, align: "right" as const }))],
        rows: r.candidates.map((c) => ({
          key: `${c.tier}|${c.candidate}`,
          cells: [
            textCell(`${c.tier} ${c.candidate}`),
            ...splits.map((s) => {
              const v = c.bySplit?.[s];
              return textCell(v ? `${count(v.fixed)} / ${count(v.broken)} of ${count(v.n)}` : "—");
            }),
          ],
        })),
      },
    });
  blocks.push({
    kind: "paragraph",
    spans: [
      span("Outcome: ", { strong: true }),
      r.fixedBy ? span(`fixed by ${r.fixedBy}. `, { tone: "pass", strong: true }) : span("no candidate validated. "),
      span(r.recommendation),
    ],
  });
  if (r.recipe)
    blocks.push({
      kind: "code",
      label: "L4 fine-tune recipe (written, not executed)",
      text: JSON.stringify(r.recipe, null, 2),
    });
  return { id: "repairs", title: `Repair ladder (M5, ceiling ${r.maxTier})`, blocks, sections: [] };
}

function problemsSection(report: Report): SectionView | undefined {
  const items: Span[][] = [
    ...report.problems.map((x) => [span(`${x.what}: `, { strong: true }), span(x.why)]),
    ...report.signals.untestable.map((x) => [span(`${x.name}: `, { strong: true, code: true }), span(x.reason)]),
  ];
  if (!items.length) return undefined;
  return {
    id: "problems",
    title: "What could not be tested, and why",
    blocks: [{ kind: "list", items }],
    sections: [],
  };
}

/** A promoted model's lineage (`provenance.model.lineage`, written by `evalrx investigate --model <promoted>`) in words, root first. */
function lineageText(steps: unknown): string | undefined {
  if (!Array.isArray(steps) || steps.length === 0) return undefined;
  const step = (s: Record<string, unknown>) =>
    `→ ${String(s["id"])} (${String(s["tier"])} ${String(s["repair"])}: failures ${Number(s["delta"]) > 0 ? "+" : ""}${(100 * Number(s["delta"])).toFixed(1)} pp, fixed ${String(s["fixed"])} / broke ${String(s["broken"])} of ${String(s["n"])}, p = ${Number(s["p"]).toPrecision(3)}, e = ${Number(s["e"]).toPrecision(3)}; run ${String(s["runId"])})`;
  const first = steps[0] as Record<string, unknown>;
  return [String(first["parent"]), ...steps.map((s) => step(s as Record<string, unknown>))].join(" ");
}

function provenanceSection(report: Report): SectionView {
  const p = report.provenance;
  const d = p.data;
  const labelled = d.labelDistribution.fail + d.labelDistribution.pass;
  const lineage = lineageText(p.model?.["lineage"]);
  const model = p.model
    ? Object.entries(p.model)
        .filter(([k]) => k !== "lineage")
        .map(
          ([k, v]) =>
            `${k}: ${Array.isArray(v) ? v.join(", ") : typeof v === "object" ? JSON.stringify(v) : String(v)}`,
        )
        .join(" · ")
    : undefined;
  return {
    id: "provenance",
    title: "Provenance",
    blocks: [
      {
        kind: "facts",
        id: "provenance",
        items: [
          { label: "Code version", value: textCell(p.codeVersion, { code: true }) },
          { label: "Data", value: textCell(d.source || "—", { ...(d.sampled ? { sub: d.sampled } : {}) }) },
          { label: "Data fingerprint", value: textCell(d.fingerprint || "—", { code: true }) },
          { label: "Cases", value: numberCell(d.n, "count") },
          {
            label: "Label distribution",
            value: textCell(
              `${count(d.labelDistribution.fail)} fail · ${count(d.labelDistribution.pass)} pass (${percent(d.labelDistribution.fail / Math.max(1, labelled))} fail)`,
              { sub: d.labelColumn ? `from the column ${d.labelColumn}` : "labelled in M1 by the evaluators" },
            ),
          },
          {
            label: "Holdout",
            value: textCell(
              p.holdout
                ? `${percent(p.holdout.fraction)} sealed by ${p.holdout.by}: ${count(p.holdout.exploreN)} exploration · ${count(p.holdout.sealedN)} sealed${p.holdout.repairN !== undefined ? ` · ${count(p.holdout.repairN)} repair` : ""}${p.holdout.clusters !== undefined ? ` (${count(p.holdout.clusters)} clusters)` : ""}`
                : "—",
            ),
          },
          { label: "Seed", value: numberCell(p.seed, "count") },
          { label: "α", value: numberCell(p.alpha, "decimal") },
          ...(model ? [{ label: "Model", value: textCell(model) }] : []),
          ...(lineage ? [{ label: "Lineage", value: textCell(lineage) }] : []),
          {
            label: "Report",
            value: textCell(`${report.format} v${report.version}`, {
              sub: `created ${report.createdAt}${report.finishedAt ? `, finished ${report.finishedAt}` : ""}`,
            }),
          },
        ],
      },
    ],
    sections: [],
  };
}

function methodsSection(report: Report): SectionView {
  const total = report.stages.reduce((a, s) => a + s.ms, 0);
  return {
    id: "methods",
    title: "Methods and stage timings",
    blocks: [
      report.eValueMethods.length
        ? { kind: "list", items: report.eValueMethods.map((m) => [span(m)]) }
        : { kind: "paragraph", spans: [span("No test ran, so no method is named.")] },
      {
        kind: "table",
        table: {
          id: "stages",
          caption: "Wall time per stage",
          columns: [{ label: "Stage" }, { label: "Time", align: "right" }, { label: "Share", align: "right" }],
          rows: [
            ...report.stages.map((s, i) => ({
              key: `${s.stage}|${i}`,
              cells: [
                textCell(s.stage),
                numberCell(s.ms, "duration"),
                numberCell(total > 0 ? s.ms / total : null, "percent"),
              ],
            })),
            {
              key: "total",
              cells: [
                textCell("all stages"),
                numberCell(total, "duration"),
                numberCell(total > 0 ? 1 : null, "percent"),
              ],
            },
          ],
        },
      },
    ],
    sections: [],
  };
}

/**
 * The report as its view: the verdict header, then the sections in reading
 * order — verdicts with the forest plot, hypotheses with their evidence
 * cases, signals with their distributions, the probe (POPE, CHAIR, attention),
 * the mechanism test, the repair ladder, what could not be tested,
 * provenance, methods and stage timings. Sections the report has no data for
 * are left out; optional fields newer reports carry are shown when present.
 *
 * @example reportView(report, { width: 960 }).sections.map((s) => s.id)
 *   // ["verdicts", "hypotheses", "signals", "probe", "repairs", "problems", "provenance", "methods"]
 */
export function reportView(report: Report, options: ReportViewOptions = {}): ReportView {
  const parts = reportViewParts(report, options);
  const sections = parts.sections.map((build) => build()).filter((s): s is SectionView => s !== undefined);
  return { title: parts.title, header: parts.header, sections, width: parts.width };
}

/** A report's view in parts: the header at once, each section built when its function is called. */
export interface ReportViewParts {
  readonly title: string;
  readonly header: ReportHeaderView;
  readonly width: number;
  /** One builder per section, in order; a builder gives undefined when the report has nothing for it. */
  readonly sections: readonly (() => SectionView | undefined)[];
}

/**
 * The view `reportView` builds, as its header and one builder per section, so
 * a page can build the sections one task at a time (the figures of a large
 * report take a long task to build all at once).
 *
 * @example
 * const parts = reportViewParts(report, { width: 1000 });
 * parts.sections.map((build) => build()) // the sections of reportView(report, { width: 1000 }), undefined where it has none
 */
export function reportViewParts(report: Report, options: ReportViewOptions = {}): ReportViewParts {
  const width = Math.max(320, Math.min(1600, Math.round(options.width ?? 960)));
  const size = options.overlaySize ?? 160;
  const opacity = options.opacity ?? 0.6;
  return {
    title: `EvalRx report ${report.runId}`,
    header: header(report),
    width,
    sections: [
      () => verdictsSection(report, width),
      () => hypothesesSection(report, size, opacity),
      () => modesSection(report, size, opacity),
      () => lessonsSection(report),
      () => probeSearchSection(report),
      () => signalsSection(report, width),
      () => probeSection(report, width),
      () => mechanismSection(report),
      () => repairsSection(report, width),
      () => agenticSection(report),
      () => analysesSection(report, width),
      () => problemsSection(report),
      () => provenanceSection(report),
      () => methodsSection(report),
    ],
  };
}

/**
 * Every section of a view, depth first (sections before their subsections).
 *
 * @example [...allSections(view)].map((s) => s.id) // ["verdicts", "hypotheses", "hypothesis-H1", …]
 */
export function* allSections(view: { readonly sections: readonly SectionView[] }): Generator<SectionView> {
  for (const s of view.sections) {
    yield s;
    yield* allSections(s);
  }
}
