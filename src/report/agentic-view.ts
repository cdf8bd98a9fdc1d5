/**
 * Two sections of the report view: the path the judge took in the agentic
 * loop (each turn: the call, its reason, what the host did), and the analyses
 * run in the sandbox as they ran (code, input fingerprint, runtime, tables,
 * figures drawn from their specs, notes, suggestions, or the error). A figure
 * spec is the analysis' own output, so it is checked before it is drawn; one
 * that fails says which field and what was expected, and its values still
 * show as a table. Everything here is text: the page and the HTML export
 * escape it.
 */
import { analysisFigureTable } from "../figures/analysis-figure-spec.ts";
import { analysisFigure } from "../figures/analysis-figure.ts";
import type { Block, Cell, SectionView, Span, TableView } from "./view.ts";
import type { Report } from "./schema.ts";

const text = (t: string, code = false): Cell => ({ kind: "text", text: t, ...(code ? { code: true } : {}) });
const badge = (t: string, tone: "pass" | "fail" | "warn" | "neutral"): Cell => ({ kind: "badge", text: t, tone });
const span = (t: string, extra: Omit<Span, "text"> = {}): Span => ({ text: t, ...extra });

/** A tool call's arguments in one line (an analysis' code is shown in full in the analyses section). */
function argsText(tool: string | null, args: Readonly<Record<string, unknown>>): string {
  const shown = Object.entries(args).map(([k, v]) =>
    tool === "run_analysis" && k === "code"
      ? `code: ${String(v).split("\n").length} lines`
      : `${k}: ${JSON.stringify(v)}`,
  );
  return shown.length ? shown.join(", ").slice(0, 300) : "—";
}

/**
 * The judge's path, or undefined when the run was not agentic.
 * @example agenticSection(report)?.blocks[0] // the stop line
 */
export function agenticSection(report: Report): SectionView | undefined {
  const a = report.agentic;
  if (!a) return undefined;
  const refused = a.turns.filter((t) => t.status === "refused").length;
  const stop = a.stop;
  const blocks: Block[] = [
    {
      kind: "note",
      tone: stop?.success ? "pass" : "neutral",
      spans: stop
        ? [
            span(stop.success ? `Stopped with success on ${stop.hypothesis ?? "?"}. ` : "Stopped without a claim. ", {
              strong: true,
            }),
            span(`${stop.by === "judge" ? "The judge stopped" : "The host stopped the run"}: ${stop.summary}`),
          ]
        : [span("The run ended before the loop stopped (the log is incomplete).", { strong: true })],
    },
    {
      kind: "facts",
      id: "agentic-facts",
      items: [
        { label: "Judge", value: text(a.judge, true) },
        { label: "Turns", value: text(`${a.turns.length} of ${a.maxTurns} (${refused} refused)`) },
        {
          label: "Model calls",
          value: text(
            `${stop?.modelCalls ?? 0}${a.modelCallBudget !== null ? ` of a budget of ${a.modelCallBudget}` : ""}`,
          ),
        },
        { label: "Sandbox", value: text(a.sandbox ?? "none (run_analysis unavailable)") },
      ],
    },
    {
      kind: "paragraph",
      small: true,
      spans: [
        span("The host, not the judge, enforced the rules: "),
        span(
          `per-tool caps (${Object.entries(a.caps)
            .map(([k, v]) => `${k} ${v}`)
            .join(
              ", ",
            )}); statistics before hypotheses, hypotheses frozen before the sealed split opens, the sealed split opened once; the model-call budget; and success only on a hypothesis tested on the sealed split and found SUPPORTED and protocol-consistent. A refused call spends its turn.`,
        ),
      ],
    },
  ];
  const table: TableView = {
    id: "agentic-turns",
    caption: "Each turn: the tool the judge called, its reason, and what the host did",
    columns: [
      { label: "#", align: "right" },
      { label: "tool" },
      { label: "arguments" },
      { label: "why" },
      { label: "host" },
      { label: "outcome" },
    ],
    rows: a.turns.map((t) => ({
      key: `turn-${t.turn}`,
      cells: [
        text(String(t.turn)),
        text(t.tool ?? (t.reply !== undefined ? "(unreadable)" : "(no reply)"), true),
        text(argsText(t.tool, t.args)),
        text(t.why || "—"),
        t.status === "ran" ? badge("ran", "pass") : badge("refused", "fail"),
        text(t.status === "ran" ? (t.result ?? "") : (t.reason ?? "")),
      ],
    })),
  };
  blocks.push({ kind: "table", table });
  return { id: "agentic", title: "Agentic loop: the judge's path", blocks, sections: [] };
}

/**
 * One figure an analysis returned: drawn from its spec at `width` px (the spec's values are the figure's table),
 * or, when the spec fails its check, a note naming the field and what was expected followed by the values as a
 * table.
 *
 * @example analysisFigureBlocks({ kind: "bar", title: "d", x: ["a"], y: [0.4] }, "A1", 0, 960)[0].kind // "figure"
 */
export function analysisFigureBlocks(spec: unknown, analysis: string, k: number, width: number): Block[] {
  const id = `analysis-${analysis}-figure-${k + 1}`;
  const title =
    typeof spec === "object" && spec !== null && typeof (spec as { title?: unknown }).title === "string"
      ? (spec as { title: string }).title
      : `figure ${k + 1}`;
  try {
    const scene = analysisFigure(spec, { width, path: `${analysis} figures[${k}]` });
    const kind = (spec as { kind: string }).kind;
    return [
      {
        kind: "figure",
        figure: {
          id,
          title,
          scene,
          caption: `A ${kind} figure ${analysis} returned from the sandbox, drawn by the host from its values (they are in the table).`,
        },
      },
    ];
  } catch (error) {
    const said = (error as Error).message.replace(/^analysisFigure\(\): /, "");
    const table = analysisFigureTable(spec);
    return [
      {
        kind: "note",
        tone: "warn",
        spans: [
          span(`${analysis}'s figure ${k + 1} (${title}) could not be drawn: `, { strong: true }),
          span(`${said}. Its values are in the table below.`),
        ],
      },
      {
        kind: "table",
        table: {
          id,
          // Short: the note above names the figure, and a two-column table is narrow.
          caption: `Figure ${k + 1}'s values`,
          columns: table.columns.map((c) => ({ label: c.label, ...(c.align ? { align: c.align } : {}) })),
          rows: table.rows.map((row, i) => ({ key: `p${i}`, cells: row.map((c) => text(c)) })),
        },
      },
    ];
  }
}

/**
 * The analyses as they ran, or undefined when none ran; figures are drawn `width` px wide (the view's width).
 * @example analysesSection(report, 960)?.sections[0].blocks[1] // { kind: "code", label: "analysis.js as it ran", … }
 */
export function analysesSection(report: Report, width = 960): SectionView | undefined {
  const list = report.analyses;
  if (!list?.length) return undefined;
  const sections: SectionView[] = list.map((r) => {
    const blocks: Block[] = [
      {
        kind: "facts",
        id: `analysis-${r.id}-facts`,
        items: [
          { label: "Written by", value: text(r.author, true) },
          { label: "Purpose", value: text(r.purpose || "—") },
          { label: "Input", value: text(`${r.n} exploration records, ${r.fingerprint}`, true) },
          { label: "Runtime", value: text(r.runtime) },
          {
            label: "Outcome",
            value: r.ok
              ? badge(`ran in ${r.ms} ms`, "pass")
              : badge(`${r.reason ?? "failed"} after ${r.ms} ms`, "fail"),
          },
        ],
      },
      { kind: "code", label: "analysis.js as it ran", text: r.code },
    ];
    if (!r.ok && r.error) blocks.push({ kind: "note", tone: "fail", spans: [span(r.error)] });
    const out = r.output;
    if (out) {
      for (const n of out.notes) blocks.push({ kind: "paragraph", spans: [span(n)] });
      out.tables.forEach((t, k) =>
        blocks.push({
          kind: "table",
          table: {
            id: `analysis-${r.id}-table-${k + 1}`,
            caption: t.title,
            columns: t.columns.map((c) => ({ label: c })),
            rows: t.rows.map((row, i) => ({
              key: `r${i}`,
              cells: row.map((c) =>
                typeof c === "number"
                  ? text(Number.isInteger(c) ? String(c) : c.toPrecision(3))
                  : text(c === null ? "—" : String(c)),
              ),
            })),
          },
        }),
      );
      out.figures.forEach((f, k) => blocks.push(...analysisFigureBlocks(f, r.id, k, width)));
      if (out.suggestions.length)
        blocks.push({
          kind: "list",
          items: out.suggestions.map((s) => [
            span("Suggests ", {}),
            span(s.signal, { code: true }),
            span(` (${s.direction > 0 ? "higher" : "lower"} in failures): ${s.why}`),
          ]),
        });
      if (r.setAside?.length)
        blocks.push({
          kind: "list",
          items: r.setAside.map((s) => [span("Set aside: ", { strong: true }), span(s.why)]),
        });
    }
    return { id: `analysis-${r.id}`, title: `${r.id}: ${r.purpose || "analysis"}`, blocks, sections: [] };
  });
  return {
    id: "analyses",
    title: "Analyses run in the sandbox (exploration split only)",
    blocks: [
      {
        kind: "paragraph",
        small: true,
        spans: [
          span(
            "Each analysis ran locked — no network, storage or code from strings, under a time and memory bound — over the exploration records; the sealed split never reached it. A suggestion it made is exploratory: it counts only as a hypothesis decided on the sealed split.",
          ),
        ],
      },
    ],
    sections,
  };
}
