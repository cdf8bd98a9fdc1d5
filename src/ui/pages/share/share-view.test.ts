import { describe, expect, it } from "vitest";
import { runShare } from "../../../share/index.ts";
import { demoReport, demoRunExport } from "../../../share/fixtures.ts";
import { bundleName, metricRows, omissionNotes, reportHtmlName, shareTitle } from "./share-view.ts";

describe("share view helpers", () => {
  const run = runShare(demoRunExport({ cases: 10, id: "pope/1 <x>" }), true);
  const report = {
    format: "evalrx-share",
    version: 1,
    kind: "report",
    omitted: ["evidence"],
    report: demoReport(),
  } as const;

  it("titles a share by what it is", () => {
    expect(shareTitle(run)).toBe("Run pope/1 <x>");
    expect(shareTitle(report)).toBe("Report investigation-demo");
  });

  it("says what a link left out, and where the rest is", () => {
    expect(omissionNotes(run)).toEqual([]);
    expect(omissionNotes(report)).toEqual([
      "This link leaves out the evidence cases (prompts, answers, images and attention maps behind each hypothesis) to fit in a URL; ask the sender for the bundle file, which has them.",
    ]);
  });

  it("lists the pass rate first, then each evaluator", () => {
    const rows = metricRows(run.summary);
    expect(rows.map((r) => r.name)).toEqual(["pass", "yesNo"]);
    expect(rows[0]!.mean).toBeCloseTo(0.7, 12);
    expect(rows[0]!.lo).toBeLessThan(rows[0]!.mean);
    expect(metricRows(undefined)).toEqual([]);
  });

  it("names a bundle file safely", () => {
    expect(bundleName(run)).toBe("pope_1_x_.evalrx.zip");
    expect(bundleName({ ...run, run: { ...run.run, id: "../../.." } })).toBe("shared.evalrx.zip");
    expect(bundleName({ ...run, run: { ...run.run, id: "a".repeat(200) } })).toBe(`${"a".repeat(80)}.evalrx.zip`);
  });

  it("names a shared report's HTML file safely", () => {
    expect(reportHtmlName(report)).toBe("investigation-demo.html");
    const hostile = { ...report, report: { ...report.report, runId: '"><img src=x>/../run' } };
    expect(reportHtmlName(hostile)).toBe("img_src_x_.._run.html");
  });
});
