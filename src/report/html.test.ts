import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { toSvg } from "../figures/to-svg.ts";
import { EXPORT_FIGURE_WIDTH, escapeHtml, renderReportHtml } from "./html.ts";
import { parseReport, type Report } from "./schema.ts";
import { allSections, reportView } from "./view.ts";

/** A report `evalrx investigate --sample 200 --seed 1` wrote (see fixtures/README.md). */
const cliReport = (): Report =>
  parseReport(readFileSync(new URL("./fixtures/cli-report-200.json", import.meta.url), "utf8"));

/** The <svg> element drawn for a named repair candidate: its bar's x and width, and the zero line's x. */
function repairBar(html: string, candidate: string): { x: number; width: number; zero: number } {
  const at = html.indexOf('id="figure-repair-ladder"');
  const svg = html.slice(at, html.indexOf("</svg>", at));
  const zero = Number(/<line x1="([\d.]+)"[^>]*class="zero-line"/.exec(svg)?.[1]);
  const rects = [
    ...svg.matchAll(
      /<rect x="([\d.-]+)" y="[\d.-]+" width="([\d.]+)"[^>]*class="bar[^"]*"[^>]*><title>([^<]*)<\/title>/g,
    ),
  ];
  const bar = rects.find((m) => m[3]!.includes(candidate));
  if (!bar) throw new Error(`no bar for ${candidate} in the export`);
  return { x: Number(bar[1]), width: Number(bar[2]), zero };
}

describe("the HTML export: the report's view serialized into one file", () => {
  const report = cliReport();
  const html = renderReportHtml(report);

  it("is one self-contained page: no script, no external resource, a strict CSP", () => {
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html).not.toMatch(/<script|<link|<iframe|<object|<embed|\bon[a-z]+=/i);
    // The only URLs are the SVG namespace and data: images.
    for (const m of html.matchAll(/\b(?:src|href)="([^"]*)"/g))
      expect(m[1]!).toMatch(/^(data:image\/(png|jpeg|gif|webp);base64,|#)/);
    expect(html.replace(/http:\/\/www\.w3\.org\/2000\/svg/g, "")).not.toMatch(/https?:\/\//);
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"`);
  });

  it("draws the same scenes as the page, through toSvg, each with its table as text alternative", () => {
    const view = reportView(report, { width: EXPORT_FIGURE_WIDTH });
    const figures = [...allSections(view)]
      .flatMap((s) => s.blocks)
      .flatMap((b) => (b.kind === "figure" ? [b.figure] : []));
    expect(figures.length).toBe(4);
    for (const f of figures) {
      expect(html).toContain(toSvg(f.scene));
      const after = html.slice(html.indexOf(toSvg(f.scene)));
      expect(after.slice(0, after.indexOf("</figure>"))).toContain("(the figure as a table)</summary>");
    }
    // Every figure (overlays included) has a table under it.
    expect((html.match(/<svg/g) ?? []).length).toBe((html.match(/the figure as a table/g) ?? []).length);
    for (const id of [
      "verdicts",
      "hypotheses",
      "signals",
      "probe",
      "pope",
      "chair",
      "repairs",
      "provenance",
      "methods",
    ])
      expect(html).toContain(`<section id="${id}">`);
  });

  it("points the repair bars the way fixed − broken says (8 fixed, 28 broken points left)", () => {
    const crop = { ...report.repairs!.candidates.find((c) => c.candidate.startsWith("crop and re-ask"))! };
    const doctored: Report = {
      ...report,
      repairs: {
        ...report.repairs!,
        candidates: [
          { ...crop, n: 210, fixed: 8, broken: 28, delta: 20 / 210, candidate: "crop and re-ask (8 fixed, 28 broken)" },
          { ...crop, n: 210, fixed: 14, broken: 2, delta: -12 / 210, candidate: "a repair that helps" },
        ],
      },
    };
    const out = renderReportHtml(doctored);
    const harm = repairBar(out, "crop and re-ask (8 fixed, 28 broken)");
    expect(harm.x + harm.width).toBeCloseTo(harm.zero, 1);
    expect(harm.x).toBeLessThan(harm.zero - 20);
    const help = repairBar(out, "a repair that helps");
    expect(help.x).toBeCloseTo(help.zero, 1);
    expect(help.width / harm.width).toBeCloseTo(12 / 20, 1);
    expect(out).toContain("fixed 8 · broken 28");
  });

  it("escapes every string of the report, at one point", () => {
    const hostile = `<img src=x onerror=alert(1)>"'&`;
    const evil = parseReport(
      JSON.stringify({
        ...report,
        question: hostile,
        runId: hostile,
        hypotheses: report.hypotheses.map((h) => ({
          ...h,
          mechanism: hostile,
          signal: `<script>x</script>`,
          statement: hostile,
        })),
        evidence: {
          ...report.evidence!,
          hypotheses: report.evidence!.hypotheses.map((e) => ({
            ...e,
            failing: e.failing.map((c) => ({ ...c, id: hostile, answer: hostile, prompt: `</dd><script>` })),
          })),
        },
      }),
    );
    const out = renderReportHtml(evil);
    expect(out).not.toMatch(/<img src=x|<script/);
    expect(out).toContain(escapeHtml(hostile));
  });

  it("refuses an image in a report that is not a raster data: URL", () => {
    const [hash] = Object.keys(report.evidence!.images);
    const bad = (dataUrl: string) =>
      JSON.stringify({
        ...report,
        evidence: { ...report.evidence!, images: { [hash!]: { type: "image/png", dataUrl } } },
      });
    expect(() => parseReport(bad("data:image/svg+xml;base64,PHN2Zz4="))).toThrow(/evidence\.images/);
    expect(() => parseReport(bad("https://example.com/x.png"))).toThrow(/evidence\.images/);
    expect(() => parseReport(bad('data:image/png;base64,AAAA" onload="x'))).toThrow(/evidence\.images/);
  });
});
