import { describe, expect, it } from "vitest";
import { importTable } from "../datasets/index.ts";
import { syntheticLog } from "../agent/bench/synthetic.ts";
import { exploreCases } from "../agent/run-explore.ts";
import { escapeHtml, renderReportHtml } from "./html.ts";
import { MAX_REPORT_BYTES, parseReport, type Report } from "./schema.ts";

let built: Promise<Report> | undefined;
/** One report for every test (the loop runs once); tests copy it before changing it. */
function sample(): Promise<Report> {
  built ??= (async () => {
    const { cases } = importTable(syntheticLog({ seed: 8, n: 400 }).rows, { label: "passed", input: "prompt" });
    return (await exploreCases(cases, { seed: 1, resamples: { explore: 50, sealed: 200 } })).report;
  })();
  return built;
}

describe("report format: versioned, validated, untrusted when read", () => {
  it("refuses other versions, malformed fields, non-JSON and oversized text", async () => {
    const report = await sample();
    expect(() => parseReport(JSON.stringify({ ...report, version: 7 }))).toThrow(
      /version 7 is not one this EvalRx reads/,
    );
    expect(() => parseReport(JSON.stringify({ ...report, hypotheses: [{ id: 1 }] }))).toThrow(
      /not a valid EvalRx report.*hypotheses/,
    );
    expect(() => parseReport("{nope")).toThrow(/not JSON/);
    expect(() => parseReport(" ".repeat(MAX_REPORT_BYTES + 1))).toThrow(/exceeds/);
  });

  it("renders every string from the report as text, never markup", async () => {
    const report = await sample();
    const hostile = "<img src=x onerror=alert(1)>";
    // Without a hypothesis the hostile mechanism and signal below would never reach the page.
    expect(report.hypotheses.length).toBeGreaterThan(0);
    const evil: Report = {
      ...report,
      question: hostile,
      hypotheses: report.hypotheses.map((h) => ({ ...h, mechanism: hostile, signal: `<script>x</script>` })),
    };
    const html = renderReportHtml(parseReport(JSON.stringify(evil)));
    expect(html).not.toContain("<img");
    expect(html).not.toContain("<script");
    expect(html).toContain(escapeHtml(hostile));
  });

  it("is one self-contained page: inline SVG figures, each with its table, no script, no external resource", async () => {
    const html = renderReportHtml(await sample());
    expect(html.startsWith("<!doctype html>")).toBe(true);
    // An explore report (no model): the forest plot and the signals' distributions, each with its table.
    expect((html.match(/<svg/g) ?? []).length).toBeGreaterThanOrEqual(2);
    expect((html.match(/<svg/g) ?? []).length).toBe((html.match(/the figure as a table/g) ?? []).length);
    expect(html).not.toMatch(/<script|<link|src=|https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
    expect(html).toContain("Content-Security-Policy");
  });
});
