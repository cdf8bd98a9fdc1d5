import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { decodeShare, readBundle, SHARE_ROUTE, writeBundle } from "../../share/index.ts";
import { demoReport, demoRunExport } from "../../share/fixtures.ts";
import { main } from "../cli.ts";

/** Runs `evalrx share …` in this process, output captured. */
async function run(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const log = vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void out.push(a.join(" ")));
  const error = vi.spyOn(console, "error").mockImplementation((...a: unknown[]) => void err.push(a.join(" ")));
  try {
    const status = await main(["share", ...args]);
    return { status, stdout: out.join("\n"), stderr: err.join("\n") };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

const dir = mkdtempSync(join(tmpdir(), "evalrx-share-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string | Uint8Array) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

describe("evalrx share", () => {
  it("prints the link of a report at the given address, and writes its bundle", async () => {
    const report = demoReport({ cases: 600 });
    const bundle = join(dir, "r.evalrx.zip");
    const { status, stdout } = await run([
      file("report.json", JSON.stringify(report)),
      "--base",
      "https://evalrx.example/app",
      "--bundle",
      bundle,
    ]);
    expect(status).toBe(0);
    expect(stdout.startsWith(`https://evalrx.example/app/${SHARE_ROUTE}1.`)).toBe(true);
    expect(stdout.length).toBeLessThan(32 * 1024 + 100);
    const back = await decodeShare(stdout.slice(stdout.indexOf(SHARE_ROUTE) + SHARE_ROUTE.length));
    expect(back.kind === "report" && back.report.hypotheses.map((h) => h.verdict)).toEqual(["SUPPORTED", "REFUTED"]);
    const fromBundle = readBundle(readFileSync(bundle));
    expect(fromBundle.kind === "report" && fromBundle.report.runId).toBe(report.runId);
  });

  it("shares a run file and a bundle the same way, and notes what a link leaves out", async () => {
    const small = demoRunExport({ cases: 20 });
    const a = await run([file("small.run.json", JSON.stringify(small))]);
    expect(a.status).toBe(0);
    expect(a.stdout).toMatch(/^http:\/\/localhost:4173\/#\/share\/1\./);
    const b = await run([file("small.evalrx.zip", writeBundle({ kind: "run", run: small }))]);
    expect(b.stdout).toBe(a.stdout);
    const big = await run([file("big.run.json", JSON.stringify(demoRunExport({ cases: 3000 })))]);
    expect(big.status).toBe(0);
    expect(big.stderr).toContain("note: the link leaves out the per-case verdicts and answers to fit");
  });

  it("refuses files that are not a report, a run or a bundle, naming the file", async () => {
    const notJson = await run([file("x.json", "<html>")]);
    expect(notJson.status).toBe(3);
    expect(notJson.stderr).toMatch(/x\.json' is not JSON/);
    const other = await run([file("y.json", '{"format":"other"}')]);
    expect(other.stderr).toContain('has format "other"');
    const broken = await run([file("z.json", JSON.stringify({ ...demoReport(), hypotheses: 3 }))]);
    expect(broken.status).toBe(3);
    expect(broken.stderr).toContain("hypotheses");
    expect((await run([join(dir, "missing.json")])).stderr).toContain("no such file");
    expect((await run([])).stderr).toContain("expected one file, got 0");
    expect((await run([file("ok.json", JSON.stringify(demoReport())), "--base", "ftp://x"])).stderr).toContain(
      "must start with https:// or http://",
    );
  });
});
