import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { walk } from "../figures/scene.ts";
import { sceneProblems } from "../figures/testing.ts";
import { parseReport, type Report } from "./schema.ts";
import { allSections, numberCell, reportView, reportViewParts, verdictTone, type Block } from "./view.ts";

/** A report `evalrx investigate --sample 200 --seed 1` wrote (see fixtures/README.md). */
const cliReport = (): Report =>
  parseReport(readFileSync(new URL("./fixtures/cli-report-200.json", import.meta.url), "utf8"));

const blocks = (view: ReturnType<typeof reportView>) => [...allSections(view)].flatMap((s) => s.blocks);
const figures = (view: ReturnType<typeof reportView>) =>
  blocks(view).flatMap((b) => (b.kind === "figure" ? [b.figure] : []));

describe("reportView of a report the CLI wrote", () => {
  const report = cliReport();
  const view = reportView(report, { width: 960 });

  it("has every section in reading order", () => {
    expect(view.sections.map((s) => s.id)).toEqual([
      "verdicts",
      "hypotheses",
      "signals",
      "probe",
      "repairs",
      "problems",
      "provenance",
      "methods",
    ]);
    expect([...allSections(view)].map((s) => s.id)).toEqual(
      expect.arrayContaining(["pope", "chair", ...report.hypotheses.map((h) => `hypothesis-${h.id}`)]),
    );
  });

  it("says the verdicts in the header, counted", () => {
    const counts = Object.fromEntries(view.header.verdicts.map((v) => [v.verdict, v.count]));
    for (const v of ["SUPPORTED", "REFUTED", "INCONCLUSIVE"])
      expect(counts[v]).toBe(report.hypotheses.filter((h) => h.verdict === v).length);
    expect(view.header.headline.map((s) => s.text).join("")).toMatch(
      /of \d+ hypothes[ie]s SUPPORTED on the sealed split/,
    );
    expect(view.header.question).toBe(report.question);
  });

  it("draws the forest, the distributions, the attention grid and the repair ladder, each inside its viewBox and with a table", () => {
    const byId = new Map(figures(view).map((f) => [f.id, f]));
    expect([...byId.keys()]).toEqual(["forest", "signal-distributions", "attention-grid", "repair-ladder"]);
    for (const f of byId.values()) {
      expect(sceneProblems(f.scene), f.id).toEqual([]);
      expect(f.scene.width).toBeLessThanOrEqual(960);
      expect(f.scene.table.rows.length, f.id).toBeGreaterThan(0);
    }
    expect(byId.get("forest")!.scene.table.rows).toHaveLength(report.hypotheses.length);
    expect(byId.get("repair-ladder")!.scene.table.rows).toHaveLength(report.repairs!.candidates.length);
  });

  it("shows each hypothesis' failing and passing cases with image and attention overlay", () => {
    const evidence = blocks(view).flatMap((b) => (b.kind === "evidence" ? [b.evidence] : []));
    expect(evidence.map((e) => e.hypothesis)).toEqual(report.hypotheses.map((h) => h.id));
    for (const e of evidence) {
      expect(e.groups.map((g) => g.passed)).toEqual([false, true]);
      for (const c of e.groups.flatMap((g) => g.cases)) {
        expect(c.image?.src).toMatch(/^data:image\/png;base64,/);
        expect(c.overlay?.values).toHaveLength(36);
        expect(sceneProblems(c.overlay!.scene)).toEqual([]);
        expect(c.answer.length).toBeGreaterThan(0);
      }
    }
  });

  it("tabulates POPE by split with F1 and yes-ratio, and says when there is no caption for CHAIR", () => {
    const pope = blocks(view).find(
      (b): b is Extract<Block, { kind: "table" }> => b.kind === "table" && b.table.id === "pope",
    )!;
    expect(pope.table.columns.map((c) => c.label)).toEqual(
      expect.arrayContaining(["Split", "F1", "Yes-ratio", "Accuracy"]),
    );
    expect(pope.table.rows.map((r) => r.key).sort()).toEqual(["adversarial", "all", "popular", "random"]);
    const chair = [...allSections(view)].find((s) => s.id === "chair")!;
    expect(chair.blocks[0]!.kind).toBe("note");
  });

  it("gives each repair the chart's sign in its table and keeps provenance, methods and stage timings", () => {
    const repairs = blocks(view).find(
      (b): b is Extract<Block, { kind: "table" }> => b.kind === "table" && b.table.id === "repairs",
    )!;
    const net = repairs.table.columns.findIndex((c) => c.label === "Net");
    report.repairs!.candidates.forEach((c, i) => {
      const cell = repairs.table.rows[i]!.cells[net]!;
      expect(cell.kind === "number" && cell.value).toBe(c.n ? (c.fixed - c.broken) / c.n : false);
    });
    const facts = blocks(view).find((b) => b.kind === "facts" && b.id === "provenance");
    const labels = facts && facts.kind === "facts" ? facts.items.map((i) => i.label) : [];
    expect(labels).toEqual(expect.arrayContaining(["Code version", "Data fingerprint", "Label distribution"]));
    const stages = blocks(view).find((b) => b.kind === "table" && b.table.id === "stages");
    expect(stages?.kind === "table" && stages.table.rows.map((r) => r.key).at(-1)).toBe("total");
  });

  it("builds the figures for the width asked, within what they draw well", () => {
    for (const width of [480, 700, 1040])
      for (const f of figures(reportView(report, { width }))) expect(f.scene.width).toBeLessThanOrEqual(width);
  });
});

describe("reportView of older and smaller reports", () => {
  it("renders a report without the 1.x fields (evidence, POPE, CHAIR, merged) and says what it lacks", () => {
    const { evidence: _e, ...old } = cliReport();
    const probe = old.probe ? { ...old.probe, pope: undefined, chair: undefined } : undefined;
    const view = reportView(
      parseReport(JSON.stringify({ ...old, probe, hypotheses: old.hypotheses.map(({ merged: _m, ...h }) => h) })),
    );
    const ids = [...allSections(view)].map((s) => s.id);
    expect(ids).not.toContain("pope");
    expect(blocks(view).some((b) => b.kind === "evidence")).toBe(false);
    expect(JSON.stringify(view)).toMatch(/carries no evidence cases/);
  });

  it("without hypotheses, says why nothing was decided", () => {
    const view = reportView({ ...cliReport(), hypotheses: [], evidence: undefined });
    expect(view.sections.map((s) => s.id)).not.toContain("hypotheses");
    const note = view.sections[0]!.blocks[0]!;
    expect(note.kind === "note" && note.spans[0]!.text).toMatch(/No hypothesis: no signal passed the screen/);
  });
});

describe("cells", () => {
  it("format numbers once, with a dash for what is not a number", () => {
    expect(numberCell(0.00004, "pValue")).toEqual({
      kind: "number",
      value: 0.00004,
      format: "pValue",
      text: "< 0.001",
    });
    expect(numberCell(Number.NaN, "percent")).toEqual({ kind: "number", value: null, format: "percent", text: "—" });
    expect(numberCell(-20 / 210, "points")).toMatchObject({ text: "−9.5 pts" });
    expect(verdictTone("SUPPORTED")).toBe("pass");
    expect(verdictTone("REFUTED")).toBe("fail");
    expect(verdictTone("INCONCLUSIVE")).toBe("warn");
  });

  it("every node of every scene in the view has finite coordinates", () => {
    const view = reportView(cliReport());
    for (const f of figures(view))
      for (const n of walk(f.scene.children))
        if (n.type === "rect") expect(Number.isFinite(n.x) && Number.isFinite(n.width)).toBe(true);
  });
});

describe("reportViewParts", () => {
  it("builds, section by section, the view reportView builds at once", () => {
    const report = cliReport();
    const whole = reportView(report, { width: 800 });
    const parts = reportViewParts(report, { width: 800 });
    expect(parts.header).toEqual(whole.header);
    expect({ title: parts.title, width: parts.width }).toEqual({ title: whole.title, width: whole.width });
    const sections = parts.sections.map((build) => build()).filter((s) => s !== undefined);
    expect(sections).toEqual(whole.sections);
  });
});
