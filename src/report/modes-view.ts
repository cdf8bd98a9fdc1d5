/**
 * Three sections of the report view: the failure modes of the exploration
 * split (size, the chosen number of modes with its gap/silhouette rule, the
 * defining signals with effect sizes, representative cases with images and
 * attention overlays), the lessons of earlier runs this one read, and the
 * probe search that grew the dataset. Everything here is text: the page and
 * the HTML export escape it.
 */
import { count, decimal, percent } from "../figures/format.ts";
import type { Report } from "./schema.ts";
import {
  evidenceCaseView,
  numberCell,
  verdictTone,
  type Block,
  type Cell,
  type SectionView,
  type Span,
} from "./view.ts";

const text = (t: string, code = false): Cell => ({ kind: "text", text: t, ...(code ? { code: true } : {}) });
const span = (t: string, extra: Omit<Span, "text"> = {}): Span => ({ text: t, ...extra });
/** A logged note as a sentence: capital first letter, full stop. */
const sentence = (t: string) => `${t.charAt(0).toUpperCase()}${t.slice(1)}${/[.!?]$/.test(t) ? "" : "."}`;

/**
 * The failure modes, or undefined when the run found none.
 * @example modesSection(report, 160, 0.6)?.sections.map((s) => s.id) // ["mode-mode-1", "mode-mode-2"]
 */
export function modesSection(report: Report, size: number, opacity: number): SectionView | undefined {
  const m = report.modes;
  if (!m) return undefined;
  const hypotheses = new Map(report.hypotheses.map((h) => [h.id, h]));
  const chosen = m.criterion.find((r) => r.k === m.k);
  const blocks: Block[] = [
    {
      kind: "paragraph",
      spans: [
        span(`${count(m.failing)} failing exploration cases fall into `),
        span(`${m.k} mode${m.k === 1 ? "" : "s"}`, { strong: true }),
        // The rule's own words begin with the count ("2 mode(s): the gap statistic's …"): say it once.
        span(`: ${m.why.replace(/^(\d+ mode\(s\)|one mode): /, "")}.`),
        ...(chosen?.silhouette !== undefined
          ? [span(` Mean silhouette at k = ${m.k}: ${decimal(chosen.silhouette)}.`)]
          : []),
      ],
    },
    {
      kind: "table",
      table: {
        id: "modes",
        caption: "Failure modes (exploration split)",
        columns: [
          { label: "Mode" },
          { label: "Failing cases", align: "right" },
          { label: "Share", align: "right" },
          { label: "Defining signals (effect size)" },
          { label: "Hypothesis" },
          { label: "Sealed cases in it (failing)", align: "right" },
        ],
        rows: m.modes.map((mode) => {
          const h = mode.hypothesis ? hypotheses.get(mode.hypothesis) : undefined;
          return {
            key: mode.id,
            cells: [
              text(mode.id, true),
              numberCell(mode.size, "count"),
              numberCell(mode.share, "percent"),
              text(mode.defining.map((d) => `${d.signal} ${d.effectName} ${decimal(d.effect)}`).join("; ") || "—"),
              h
                ? { kind: "verdict", verdict: h.verdict, tone: verdictTone(h.verdict), text: `${h.id} ${h.verdict}` }
                : text("—"),
              text(mode.sealed ? `${count(mode.sealed.n)} (${count(mode.sealed.failures)} fail)` : "—"),
            ],
          };
        }),
      },
    },
    {
      kind: "table",
      table: {
        id: "modes-criterion",
        caption: "How many modes: the gap statistic and the silhouette at each k",
        columns: [
          { label: "k", align: "right" },
          { label: "Gap(k)", align: "right" },
          { label: "s(k)", align: "right" },
          { label: "Mean silhouette", align: "right" },
          { label: "Smallest mode", align: "right" },
          { label: "" },
        ],
        rows: m.criterion.map((r) => ({
          key: String(r.k),
          cells: [
            numberCell(r.k, "count"),
            numberCell(r.gap, "decimal"),
            numberCell(r.s, "decimal"),
            numberCell(r.silhouette ?? null, "decimal"),
            numberCell(r.smallest, "count"),
            r.k === m.k ? { kind: "badge", tone: "neutral", text: "chosen" } : text(""),
          ],
        })),
      },
    },
    { kind: "paragraph", small: true, spans: [span(`Method: ${m.method}.`)] },
  ];
  if (m.note) blocks.push({ kind: "note", tone: "neutral", spans: [span(sentence(m.note))] });
  const evidence = report.evidence;
  const sections = m.modes.map((mode): SectionView => {
    const h = mode.hypothesis ? hypotheses.get(mode.hypothesis) : undefined;
    const modeBlocks: Block[] = [
      {
        kind: "table",
        table: {
          id: `mode-${mode.id}-signals`,
          caption: `What sets ${mode.id} apart from the ${m.contrast === "boundary" ? "nearest passing" : "passing"} cases`,
          columns: [
            { label: "Signal" },
            { label: "Effect", align: "right" },
            { label: "Mean in the mode", align: "right" },
            { label: m.contrast === "boundary" ? "Mean, nearest passing" : "Mean, passing", align: "right" },
          ],
          rows: mode.defining.map((d) => ({
            key: d.signal,
            cells: [
              text(d.signal, true),
              text(`${d.effectName} ${decimal(d.effect)}`),
              numberCell(d.modeMean, "decimal"),
              numberCell(d.contrastMean, "decimal"),
            ],
          })),
        },
      },
      {
        kind: "paragraph",
        spans: [
          span(`Representative cases: `, { strong: true }),
          span(mode.representatives.join(", ") || "—", { code: true }),
          ...(mode.placed
            ? [
                span(
                  `. The fixed rule places ${count(mode.placed.n)} exploration cases in it (${count(mode.placed.failures)} failing, ${percent(mode.placed.failures / Math.max(1, mode.placed.n))})`,
                ),
              ]
            : []),
          ...(mode.sealed
            ? [
                span(
                  ` and ${count(mode.sealed.n)} sealed cases (${count(mode.sealed.failures)} failing, ${percent(mode.sealed.failures / Math.max(1, mode.sealed.n))})`,
                ),
              ]
            : []),
          span("."),
        ],
      },
    ];
    if (h)
      modeBlocks.push({
        kind: "paragraph",
        spans: [span(`${h.id} ${h.verdict}: `, { strong: true, tone: verdictTone(h.verdict) }), span(h.reason)],
      });
    const cases = evidence?.hypotheses.find((e) => e.hypothesis === mode.id);
    if (cases && cases.failing.length)
      modeBlocks.push({
        kind: "evidence",
        evidence: {
          id: `evidence-${mode.id}`,
          hypothesis: mode.id,
          signal: `mode=${mode.id}`,
          valueLabel: "Distance",
          groups: [
            {
              title: `The failing cases nearest ${mode.id}'s centre (distance in the space the modes were found in)`,
              passed: false,
              cases: cases.failing.map((c, i) =>
                evidenceCaseView(report, c, `${mode.id}|fail|${i}|${c.id}`, size, opacity),
              ),
            },
          ],
        },
      });
    return {
      id: `mode-${mode.id}`,
      title: `${mode.id}: ${count(mode.size)} failing cases (${percent(mode.share)})`,
      blocks: modeBlocks,
      sections: [],
    };
  });
  return { id: "modes", title: "Failure modes", blocks, sections };
}

/**
 * The lessons this run read from earlier runs, or undefined when it read none.
 * @example lessonsSection(report)?.blocks[0] // "3 lessons of earlier runs were read …"
 */
export function lessonsSection(report: Report): SectionView | undefined {
  const l = report.lessons;
  if (!l) return undefined;
  const blocks: Block[] = [
    {
      kind: "paragraph",
      spans: [
        span(
          l.used.length
            ? `${count(l.used.length)} lesson${l.used.length === 1 ? "" : "s"} of earlier runs on a similar model or dataset were used, from `
            : "No lesson of an earlier run on a similar model or dataset was found in ",
        ),
        span(l.store, { code: true }),
        span(`: ${l.use}.`),
        ...(l.recorded !== undefined
          ? [span(` This run left ${count(l.recorded)} new lesson${l.recorded === 1 ? "" : "s"} there.`)]
          : []),
      ],
    },
  ];
  if (l.used.length)
    blocks.push({
      kind: "table",
      table: {
        id: "lessons",
        caption: "Lessons used (weight = 0.5^(age / 30 days) × similarity of model and dataset)",
        columns: [
          { label: "Lesson" },
          { label: "Kind" },
          { label: "From run" },
          { label: "Weight", align: "right" },
          { label: "Decay", align: "right" },
          { label: "Similarity", align: "right" },
        ],
        rows: l.used.map((u) => ({
          key: u.id,
          cells: [
            text(u.text),
            text(u.kind),
            { kind: "text", text: u.runId, code: true, sub: u.at },
            numberCell(u.weight, "decimal"),
            numberCell(u.decay, "decimal"),
            numberCell(u.relevance, "decimal"),
          ],
        })),
      },
    });
  if (l.recordedLessons?.length)
    blocks.push({
      kind: "table",
      table: {
        id: "lessons-recorded",
        caption: `Lessons this run drew at its end (${count(l.recorded ?? 0)} new to the store; the others were there already)`,
        columns: [{ label: "Lesson" }, { label: "Kind" }, { label: "About" }],
        // A run can draw the same lesson twice (the 600-case demo run drew one for two modes): a repeated id is
        // keyed with its count, since the page's table needs unique keys (a repeat failed the whole report page).
        rows: l.recordedLessons.map((r, i, all) => {
          const before = all.slice(0, i).filter((o) => o.id === r.id).length;
          return {
            key: before ? `${r.id}#${before + 1}` : r.id,
            cells: [text(r.text ?? "—"), text(r.kind), text(r.subject, true)],
          };
        }),
      },
    });
  if (l.problems?.length)
    blocks.push({ kind: "list", items: l.problems.map((p) => [span("Not read: ", { strong: true }), span(p)]) });
  return { id: "lessons", title: "Lessons from earlier runs", blocks, sections: [] };
}

/** What each kind of probe search made, in words. */
const KIND_WORDS: Readonly<Record<string, string>> = {
  scene: "scene edits and rewordings",
  text: "rewordings, distractors and operand edits",
  photo: "crops, occlusions and pastes",
};

/**
 * The probe search that grew the dataset before M1, why it could not run
 * when it was asked for and could not apply, or undefined when none was asked for.
 * @example probeSearchSection(report)?.blocks[0] // "The search kept 41 failing variants …"
 */
export function probeSearchSection(report: Report): SectionView | undefined {
  const p = report.probeSearch;
  if (!p) {
    // Asked for, but nothing in the dataset could be edited with an answer known by construction: say so here too.
    const problem = report.problems.find((x) => x.what === "probe search");
    return problem
      ? {
          id: "probe-search",
          title: "Probe search: synthesized failing cases",
          blocks: [
            { kind: "note", tone: "warn", spans: [span("Not run: ", { strong: true }), span(sentence(problem.why))] },
          ],
          sections: [],
        }
      : undefined;
  }
  const blocks: Block[] = [];
  if (p.reused) {
    blocks.push({
      kind: "paragraph",
      spans: [span(p.note ?? "The grown dataset was already stored; the search did not run again.")],
    });
  } else {
    blocks.push({
      kind: "paragraph",
      spans: [
        span(
          `Before M1, ${count(p.calls ?? 0)} model calls on ${KIND_WORDS[p.kind ?? "scene"] ?? "variants"} of ${count(p.seedCalls ?? 0)} seed cases failed `,
        ),
        span(`${percent(p.rate ?? null)}`, { strong: true }),
        span(` of the time against the seeds' own ${percent(p.seedRate ?? null)}`),
        ...(p.lift !== undefined && p.lift !== null ? [span(` (${decimal(p.lift)}×)`, { strong: true })] : []),
        span(`; the ${count(p.kept ?? 0)} failing variants were kept and stored with the cases as dataset `),
        span(`${p.dataset.id}`, { code: true }),
        span(` (version ${p.dataset.version}, ${count(p.dataset.cases)} cases), which M1 probed.`),
      ],
    });
    if (p.families?.length)
      blocks.push({
        kind: "table",
        table: {
          id: "probe-families",
          caption: "Failure rate per edit family, against the seed cases' rate",
          columns: [
            { label: "Edit family" },
            { label: "Model calls", align: "right" },
            { label: "Failures", align: "right" },
            { label: "Failure rate", align: "right" },
            { label: "× seed rate", align: "right" },
            { label: "Kept", align: "right" },
          ],
          rows: [
            {
              key: "seed",
              cells: [
                text("seed cases (as given)"),
                numberCell(p.seedCalls ?? null, "count"),
                numberCell(p.seedFailures ?? null, "count"),
                numberCell(p.seedRate ?? null, "percent"),
                numberCell(1, "decimal"),
                text("—"),
              ],
            },
            ...p.families.map((f) => ({
              key: f.family,
              cells: [
                text(f.family, true),
                numberCell(f.calls, "count"),
                numberCell(f.failures, "count"),
                numberCell(f.rate, "percent"),
                numberCell(
                  f.rate !== null && p.seedRate !== undefined && p.seedRate !== null && p.seedRate > 0
                    ? f.rate / p.seedRate
                    : null,
                  "decimal",
                ),
                numberCell(f.kept, "count"),
              ],
            })),
          ],
        },
      });
    if (p.examples?.length)
      blocks.push({
        kind: "table",
        table: {
          id: "probe-examples",
          caption: "Some kept cases (expected answer by construction from the edit)",
          columns: [
            { label: "Case" },
            { label: "Question" },
            { label: "Expected" },
            { label: "Parent" },
            { label: "Edit" },
          ],
          rows: p.examples.map((x) => ({
            key: x.id,
            cells: [text(x.id, true), text(x.prompt), text(x.expected), text(x.parent, true), text(x.edit)],
          })),
        },
      });
    if (p.note) blocks.push({ kind: "note", tone: "neutral", spans: [span(sentence(p.note))] });
  }
  return { id: "probe-search", title: "Probe search: synthesized failing cases", blocks, sections: [] };
}
