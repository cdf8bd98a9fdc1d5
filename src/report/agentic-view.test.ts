import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { svgProblems } from "../figures/testing.ts";
import { toSvg } from "../figures/to-svg.ts";
import { renderReportHtml } from "./html.ts";
import { parseReport, type Report } from "./schema.ts";
import { allSections, reportView, type Block } from "./view.ts";

/** The CLI's 200-case report (fixtures/README.md), with an agentic loop and two analyses added as a log would give them. */
function agenticReport(figures: unknown[]): Report {
  const base = JSON.parse(readFileSync(new URL("./fixtures/cli-report-200.json", import.meta.url), "utf8")) as Record<
    string,
    unknown
  >;
  const refused = (turn: number) => ({
    turn,
    tool: null,
    args: {},
    why: "",
    status: "refused",
    reason: "malformed reply: expected one JSON object {tool, args, why}, got text that is not JSON",
    modelCalls: 0,
    reply: "1 1 6 1 6",
  });
  return parseReport(
    JSON.stringify({
      ...base,
      agentic: {
        judge: "model:tiny-lm",
        maxTurns: 3,
        modelCallBudget: null,
        caps: { run_probe: 1, run_analysis: 3 },
        tools: ["run_probe", "run_analysis", "stop"],
        sandbox: "page worker (no network, no storage, 2000 ms)",
        turns: [
          refused(1),
          refused(2),
          // A judge that could not answer at all (an endpoint down, a prompt over a small model's context) left no reply.
          {
            turn: 3,
            tool: null,
            args: {},
            why: "",
            status: "refused",
            reason:
              "the judge could not answer: the prompt is 211 tokens, over tiny-lm's context length of 64: shorten it",
            modelCalls: 0,
          },
        ],
        stop: {
          by: "host",
          success: false,
          summary: "the judge did not stop within 3 turns; the host ended the run without a claim",
          turns: 3,
          refused: 3,
          modelCalls: 0,
          supported: [],
        },
      },
      analyses: [
        {
          id: "A1",
          author: "judge",
          purpose: "standardized mean difference of every numeric signal",
          code: "return { figures: [] };",
          fingerprint: "sha256:abc",
          n: 120,
          runtime: "page worker",
          ok: true,
          ms: 12,
          output: { tables: [], figures, notes: [], suggestions: [] },
        },
      ],
    }),
  );
}

const analyses = (report: Report, width = 960) =>
  [...allSections(reportView(report, { width }))].filter((s) => s.id.startsWith("analysis-"));
const blocksOf = (report: Report, width?: number): Block[] => analyses(report, width).flatMap((s) => s.blocks);

const bar = {
  kind: "bar",
  title: "Largest standardized differences",
  x: ["attention.imageShare.L1H2", "tokenEntropy.answer"],
  y: [-1.42, 0.81],
  xLabel: "signal",
  yLabel: "d (failures − passes)",
};

describe("the analyses section draws each figure spec an analysis returned", () => {
  it("draws a sound spec as a figure at the view's width, its values as the figure's table", () => {
    const blocks = blocksOf(agenticReport([bar]), 720);
    const figure = blocks.find((b) => b.kind === "figure");
    expect(figure?.kind === "figure" && figure.figure.id).toBe("analysis-A1-figure-1");
    if (figure?.kind !== "figure") return;
    expect(figure.figure.title).toBe("Largest standardized differences");
    expect(figure.figure.scene.width).toBe(720);
    expect(figure.figure.scene.table.rows).toEqual([
      ["attention.imageShare.L1H2", "−1.42"],
      ["tokenEntropy.answer", "0.81"],
    ]);
    expect(svgProblems(toSvg(figure.figure.scene))).toEqual([]);
    // No figure spec is left drawn as a table alone.
    expect(blocks.some((b) => b.kind === "table" && b.table.id.includes("figure"))).toBe(false);
  });

  it("names the field and what was expected for a spec it cannot draw, and still shows its values as a table", () => {
    const blocks = blocksOf(
      agenticReport([bar, { kind: "scatter", title: "Entropy by share", x: ["low", "high"], y: [1.2, 0.4] }]),
    );
    const note = blocks.find((b) => b.kind === "note" && b.tone === "warn");
    expect(note?.kind === "note" && note.spans.map((s) => s.text).join("")).toBe(
      'A1\'s figure 2 (Entropy by share) could not be drawn: A1 figures[1].x[0] must be a number (a scatter places each point by its x), got "low". Its values are in the table below.',
    );
    const table = blocks.find((b) => b.kind === "table" && b.table.id === "analysis-A1-figure-2");
    expect(
      table?.kind === "table" && table.table.rows.map((r) => r.cells.map((c) => ("text" in c ? c.text : ""))),
    ).toEqual([
      ["low", "1.2"],
      ["high", "0.4"],
    ]);
    // The sound figure beside it is still drawn.
    expect(blocks.filter((b) => b.kind === "figure")).toHaveLength(1);
  });

  it("reads a spec the report schema lets through but the figure refuses (x and y of different lengths) as a table", () => {
    const blocks = blocksOf(agenticReport([{ kind: "line", title: "AUC by layer", x: [0, 1, 2], y: [0.5, 0.6] }]));
    const note = blocks.find((b) => b.kind === "note");
    expect(note?.kind === "note" && note.spans.at(-1)!.text).toMatch(
      /^A1 figures\[0\]\.y must be 3 values \(one per x\), got 2 values\./,
    );
    const table = blocks.find((b) => b.kind === "table");
    expect(table?.kind === "table" && table.table.rows.at(-1)!.cells.map((c) => ("text" in c ? c.text : ""))).toEqual([
      "2",
      "—",
    ]);
  });

  it("exports the figure as inline SVG with its table under it, and markup in a spec as text", () => {
    const evil = "<img src=x onerror=alert(1)>";
    const html = renderReportHtml(agenticReport([bar, { ...bar, title: evil, x: [evil, "b"] }]));
    expect(html).toContain('id="figure-analysis-A1-figure-1"');
    expect(html).toContain('id="figure-analysis-A1-figure-2"');
    expect(html).toContain(
      "<summary>Largest standardized differences: the bar figure&#39;s values (the figure as a table)",
    );
    expect(html).not.toContain("<img src=x");
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
  });
});

describe("the report of a judge-decided run that never probed", () => {
  it("says nothing was labelled or tested, leaves the empty signals section out, and shows the judge's path", () => {
    const base = agenticReport([]) as unknown as Record<string, Record<string, unknown>>;
    const provenance = base.provenance!;
    const report = parseReport(
      JSON.stringify({
        ...base,
        provenance: {
          ...provenance,
          data: { ...(provenance.data as object), labelDistribution: { fail: 0, pass: 0 } },
        },
        signals: { tried: 0, selected: [], untestable: [], tested: [], procedure: "" },
        hypotheses: [],
        probe: undefined,
        repairs: undefined,
        evidence: undefined,
        analyses: undefined,
      }),
    );
    const view = reportView(report);
    expect(view.sections.map((s) => s.id)).not.toContain("signals");
    expect(view.sections.map((s) => s.id)).toContain("agentic");
    const data = view.header.facts.find((f) => f.label === "Data")!.value;
    expect(data.kind === "text" && data.sub).toBe("not labelled");
    expect(view.header.headline.map((s) => s.text).join("")).toBe(
      "No hypothesis: no signal was tested on the exploration split, so nothing was decided.",
    );
    const note = view.sections.find((s) => s.id === "verdicts")!.blocks[0];
    expect(note?.kind === "note" && note.spans[0]!.text).toBe(
      "No hypothesis: the run tested no signal on the exploration split, so the sealed split stays unread.",
    );
  });
});

describe("the agentic section shows the judge's path", () => {
  it("lists every refused turn with the host's reason, and who stopped the run", () => {
    const view = reportView(agenticReport([]));
    const section = view.sections.find((s) => s.id === "agentic")!;
    const facts = section.blocks.find((b) => b.kind === "facts");
    expect(facts?.kind === "facts" && facts.items.map((i) => ("text" in i.value ? i.value.text : ""))).toEqual(
      expect.arrayContaining(["model:tiny-lm", "3 of 3 (3 refused)"]),
    );
    const stop = section.blocks[0];
    expect(stop?.kind === "note" && stop.spans.map((s) => s.text).join("")).toBe(
      "Stopped without a claim. The host stopped the run: the judge did not stop within 3 turns; the host ended the run without a claim",
    );
    const turns = section.blocks.find((b) => b.kind === "table");
    expect(turns?.kind === "table" && turns.table.rows).toHaveLength(3);
    if (turns?.kind !== "table") return;
    for (const row of turns.table.rows) {
      const cells = row.cells.map((c) => ("text" in c ? c.text : ""));
      expect(cells[1]).toBe(row.key === "turn-3" ? "(no reply)" : "(unreadable)");
      expect(cells[4]).toBe("refused");
      expect(cells[5]).toMatch(/^(malformed reply|the judge could not answer): /);
    }
  });
});
