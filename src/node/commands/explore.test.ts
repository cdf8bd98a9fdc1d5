import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { syntheticLog, toCsv, toJsonl } from "../../agent/bench/synthetic.ts";
import { parseReport } from "../../report/schema.ts";

const bin = fileURLToPath(new URL("../bin.mjs", import.meta.url));
const run = (args: string[]) => spawnSync(bin, ["explore", ...args], { encoding: "utf8", timeout: 120_000 });

describe("evalrx explore", () => {
  it("finds the planted column of a CSV eval log with no prompt column; --json prints the report, --out writes the files", () => {
    const dir = mkdtempSync(join(tmpdir(), "evalrx-explore-"));
    const rows = syntheticLog({ seed: 21, clusterSize: 2 }).rows.map(({ prompt: _p, ...r }) => r);
    const file = join(dir, "log.csv");
    writeFileSync(file, toCsv(rows));
    const out = join(dir, "out");
    const r = run([file, "--json", "--seed", "3", "--out", out, "-q", "What predicts the failures?"]);
    expect(r.status, r.stderr).toBe(0);
    const report = parseReport(r.stdout);
    const h = report.hypotheses.find((x) => x.signal === "planted")!;
    expect(h).toMatchObject({ signal: "planted", direction: "higher in failures", verdict: "SUPPORTED" });
    expect(h.exploreEffect.value).toBeGreaterThan(0.5);
    expect(h.sealedN).toBeGreaterThan(100);
    expect(h.sealedEffect).toMatchObject({ name: "AUC", lo: expect.any(Number), hi: expect.any(Number) });
    expect(h.eValue).toBeGreaterThan(20);
    expect(report.provenance.holdout).toMatchObject({ fraction: 0.4, by: "cluster" });
    expect(report.provenance.data.labelColumn).toBe("passed");
    // Progress lines went to stderr, one per stage.
    expect(r.stderr).toMatch(/M2 explore .* signals tried/);
    expect(r.stderr).toMatch(/M4 verify +sealed n=/);
    const html = readFileSync(join(out, "report.html"), "utf8");
    expect(html).toContain("<svg");
    expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org)/);
    expect(parseReport(readFileSync(join(out, "report.json"), "utf8")).runId).toBe(report.runId);
    expect(readFileSync(join(out, "events.jsonl"), "utf8").trim().split("\n").length).toBeGreaterThan(10);
  });

  it("a file with no label column: exit 3 and a message that says how to mend it", () => {
    const dir = mkdtempSync(join(tmpdir(), "evalrx-explore-"));
    const file = join(dir, "nolabel.jsonl");
    writeFileSync(file, toJsonl(syntheticLog({ seed: 1, n: 40 }).rows.map(({ passed: _p, ...r }) => r)));
    const r = run([file]);
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/no label column.*--label COL/);
  });

  it("a one-class label: exit 3, the reason, and a report saying nothing could be tested", () => {
    const dir = mkdtempSync(join(tmpdir(), "evalrx-explore-"));
    const file = join(dir, "allfail.csv");
    writeFileSync(file, toCsv(syntheticLog({ seed: 1, n: 80 }).rows.map((r) => ({ ...r, passed: false }))));
    const r = run([file, "--json"]);
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/all 80 cases fail/);
    const report = parseReport(r.stdout);
    expect(report.hypotheses).toEqual([]);
    expect(report.signals.untestable.length).toBeGreaterThan(5);
  });

  it("reads logs with data check's reader and options: bad JSONL lines skipped by line, --label in JSONL, a .eval archive, NaN", () => {
    const dir = mkdtempSync(join(tmpdir(), "evalrx-explore-"));
    const rows = syntheticLog({ seed: 4, n: 300 }).rows.map(({ prompt: _p, passed, ...r }, i) => ({
      ...r,
      ok: passed!,
      odd: i % 9 === 0 ? "NaN" : 1,
    }));
    const lines = toJsonl(rows)
      .trim()
      .split("\n")
      .map((l) => l.replace('"odd":"NaN"', '"odd":NaN'));
    lines.splice(10, 0, '{"id": "torn', "null");
    const file = join(dir, "log.jsonl");
    writeFileSync(file, lines.join("\n"));
    const r = run([file, "--label", "ok", "--seed", "2", "--json"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/300 cases \(jsonl\), 2 bad row\(s\) skipped/);
    expect(r.stderr).toMatch(/line 11: not JSON \(Unterminated string/);
    expect(r.stderr).toMatch(/line 12: not an object \(a null\)/);
    expect(r.stderr).toMatch(/label: 'ok' \(named with --label\)/);
    expect(r.stderr).toMatch(/'odd' holds 34 non-finite number\(s\)/);
    expect(parseReport(r.stdout).provenance.data.labelColumn).toBe("ok");

    const log = fileURLToPath(new URL("../../datasets/fixtures/logs/pope-zstd.eval", import.meta.url));
    const eval_ = run([log, "--format", "inspect"]);
    expect(eval_.stdout).toMatch(/read .*pope-zstd.eval: 8 cases \(inspect\)/);
    expect(eval_.stdout).toMatch(/label: 'score.match' \(the first scorer whose every value is a verdict\)/);
    expect(eval_.stdout).toMatch(
      /! leak: not tested as signals, being the label 'score.match' or scored from the same answer/,
    );
    const results = fileURLToPath(
      new URL("../../datasets/fixtures/logs/results_2026-06-01T10-00-00.123456.json", import.meta.url),
    );
    const aggregate = run([results]);
    expect(aggregate.status).toBe(3);
    expect(aggregate.stderr).toMatch(
      /results file: aggregate scores .*samples_truthfulqa_gen_2026-06-01T10-00-00.123456.jsonl/,
    );
  });
});
