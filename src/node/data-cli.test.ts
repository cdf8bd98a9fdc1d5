import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { datasetVersion } from "../datasets/identity.ts";
import { FileStore } from "../store/files.node.ts";

const bin = fileURLToPath(new URL("./bin.mjs", import.meta.url));
const fixture = (name: string) => fileURLToPath(new URL(`../datasets/fixtures/${name}`, import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "evalrx-data-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const evalrx = (...args: string[]) => spawnSync(bin, args, { encoding: "utf8", cwd: dir });

describe("evalrx data check", () => {
  it("--json prints the valid count and every problem with its line; exit 1 when some rows are bad", () => {
    const run = evalrx("data", "check", fixture("dataset.jsonl"), "--json");
    expect(run.status).toBe(1);
    const out = JSON.parse(run.stdout);
    expect(out.valid).toBe(5);
    expect(out.problems.map((p: { line: number }) => p.line)).toEqual([3, 4, 5, 6, 7, 9, 10, 11, 12, 16]);
    expect(Object.keys(out.problems[0]).sort()).toEqual(["line", "reason"]);
    expect(out.problems.find((p: { line: number }) => p.line === 9).reason).toMatch(/image not found/);
  });

  it("prints a readable report, exits 0 when every row is valid, and takes --format and a column mapping", () => {
    const human = evalrx("data", "check", fixture("table.csv"));
    expect(human.status).toBe(1);
    expect(human.stdout).toContain("4 valid row(s); 3 problem(s)");
    expect(human.stdout).toContain("line 7: not valid UTF-8");
    const good = join(dir, "good.txt");
    writeFileSync(good, "key;text;ok\n1;hello;pass\n2;bye;fail\n");
    const run = evalrx("data", "check", good, "--format", "csv", "--delimiter", ";", "--id", "key", "--input", "text");
    expect(run.stdout).toContain("2 valid row(s); every row is valid");
    expect(run.status).toBe(0);
  });

  it("exit 3 when the file cannot be read at all, with one line saying why", () => {
    expect(evalrx("data", "check", join(dir, "nope.jsonl")).status).toBe(3);
    expect(evalrx("data", "check", join(dir, "nope.jsonl")).stderr).toContain("no such file");
    const notParquet = join(dir, "x.parquet");
    writeFileSync(notParquet, "not parquet at all");
    const run = evalrx("data", "check", notParquet);
    expect(run.status).toBe(3);
    expect(run.stderr).toContain("not a readable Parquet file");
    expect(evalrx("data", "check", fixture("dataset.jsonl"), "--format", "xml").status).toBe(3);
  });
});

describe("evalrx data check on eval logs", () => {
  const log = (name: string) => fixture(`logs/${name}`);

  it("says what a log lacks and where its labels came from; --json carries the same", () => {
    const human = evalrx("data", "check", log("cancelled.eval"));
    expect(human.status).toBe(0);
    expect(human.stdout).toContain("(inspect): 3 valid row(s); every row is valid; 4 warning(s)");
    expect(human.stdout).toContain("label: 'score.match' (the first scorer whose every value is a verdict)");
    expect(human.stdout).toContain("! the run was cancelled: 3 of 10 samples completed");
    const json = JSON.parse(evalrx("data", "check", log("cancelled.eval"), "--json").stdout);
    expect(json.warnings.map((w: { code: string }) => w.code)).toEqual([
      "run-cancelled",
      "sample-errors",
      "unlabelled",
      "no-image",
    ]);
    expect(json.label.column).toBe("score.match");
  });

  it("a log with no samples is exit 3 with what its header says; --label names a metric of lm-eval samples", () => {
    const empty = evalrx("data", "check", log("header-only.json"));
    expect(empty.status).toBe(3);
    expect(empty.stderr).toMatch(/holds no rows: the log holds no samples although its header says 3 completed/);
    const rouge = evalrx(
      "data",
      "check",
      log("samples_truthfulqa_gen_2026-06-01T10-00-00.123456.jsonl"),
      "--label",
      "rouge1_acc",
    );
    expect(rouge.status).toBe(0);
    expect(rouge.stdout).toContain("label: 'rouge1_acc' (named with --label)");
  });
});

describe("evalrx data import", () => {
  it("adds the valid rows to the file store, images once, and prints the dataset id and version", async () => {
    const storeDir = join(dir, "store");
    const run = evalrx("data", "import", fixture("dataset.jsonl"), "--store", storeDir);
    expect(run.stdout).toMatch(/^dataset dataset version [0-9a-f]{12}$/m);
    expect(run.stdout).toContain("5 case(s) added, 0 already there, 5 in all; 10 problem(s) in 15 row(s)");
    expect(run.status).toBe(1);
    const store = await FileStore.open(storeDir);
    const cases = await store.cases("dataset");
    expect(cases.map((c) => c.id).sort()).toEqual(["10", "f0c5d7b64eee", "q1", "q2", "q9"]);
    const q1 = cases.find((c) => c.id === "q1")!;
    expect(q1.hash).toMatch(/^[0-9a-f]{12}$/);
    expect(await store.getImage(q1.input.image!)).toMatchObject({ type: "image/png" });
    const record = await store.getDataset("dataset");
    expect(record).toMatchObject({ caseCount: 5, format: "jsonl", source: "dataset.jsonl" });
    expect(run.stdout).toContain(`version ${record!.version}`);

    // Importing again adds nothing and keeps the version; a second file adds only its new ids.
    const again = evalrx("data", "import", fixture("dataset.jsonl"), "--store", storeDir);
    expect(again.stdout).toContain(`version ${record!.version}`);
    expect(again.stdout).toContain("0 case(s) added, 5 already there");
    const more = join(dir, "more.jsonl");
    writeFileSync(more, '{"id":"q1","input":"clash"}\n{"id":"new","input":"fresh"}\n');
    const added = evalrx("data", "import", more, "--store", storeDir, "--dataset", "dataset");
    expect(added.status).toBe(0);
    expect(added.stdout).toContain("1 case(s) added, 1 already there, 6 in all");
    expect(added.stdout).not.toContain(`version ${record!.version}`);
    // The version built from stored hashes is the one the cases themselves give.
    const all = await (await FileStore.open(storeDir)).cases("dataset");
    expect(added.stdout).toContain(`version ${datasetVersion(all)}`);
  });
});
