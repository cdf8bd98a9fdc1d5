// A hostile-file corpus for `data check`, `data import` and `eval`: image references that leave the dataset's
// folder, point at devices, FIFOs or links out, claim huge sizes or fake their format; rows nested 5,000 deep,
// keyed `__proto__`, carrying terminal escapes and bidi controls; an empty file; a dataset file whose name
// matches a stored dataset with other cases. Each must be refused per row with its reason, or kept as data,
// never read, hung on, crashed on, or silently replaced.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { encode as encodePng } from "fast-png";
import { afterAll, describe, expect, it } from "vitest";
import { FileStore } from "../store/files.node.ts";

const bin = fileURLToPath(new URL("./bin.mjs", import.meta.url));
const haveModel = existsSync(new URL("../../models/tiny-lm/config.json", import.meta.url));
const top = mkdtempSync(join(tmpdir(), "evalrx-hostile-"));
const folder = join(top, "data");
afterAll(() => rmSync(top, { recursive: true, force: true }));

const evalrx = (...args: string[]) => spawnSync(bin, args, { encoding: "utf8", cwd: top, timeout: 120_000 });
const png = (w: number, h: number) =>
  encodePng({ width: w, height: h, data: new Uint8Array(w * h * 3).fill(90), channels: 3 });

mkdirSync(join(folder, "images"), { recursive: true });
mkdirSync(join(top, "outside"));
writeFileSync(join(folder, "images", "ok.png"), png(8, 8));
writeFileSync(join(top, "outside", "secret.png"), png(4, 4));
symlinkSync(join(top, "outside", "secret.png"), join(folder, "images", "link-out.png"));
execFileSync("mkfifo", [join(folder, "images", "fifo.png")]);
const huge = png(4, 4);
new DataView(huge.buffer).setUint32(16, 60000);
new DataView(huge.buffer).setUint32(20, 60000);
writeFileSync(join(folder, "images", "huge.png"), huge);
const fake = png(8, 8);
fake.fill(0x41, 41, fake.length - 12);
writeFileSync(join(folder, "images", "fake.png"), fake);

const deep = "[".repeat(5000) + "]".repeat(5000);
const rows = [
  `{"id":"good","input":{"prompt":"p","image":"images/ok.png"}}`,
  `{"id":"also-good","input":{"prompt":"p","image":"./images/../images/ok.png"}}`,
  `{"id":"escape","input":{"prompt":"p","image":"../outside/secret.png"}}`,
  `{"id":"absolute","input":{"prompt":"p","image":${JSON.stringify(join(top, "outside", "secret.png"))}}}`,
  `{"id":"zero","input":{"prompt":"p","image":"/dev/zero"}}`,
  `{"id":"link","input":{"prompt":"p","image":"images/link-out.png"}}`,
  `{"id":"fifo","input":{"prompt":"p","image":"images/fifo.png"}}`,
  `{"id":"dir","input":{"prompt":"p","image":"images"}}`,
  `{"id":"huge","input":{"prompt":"p","image":"images/huge.png"}}`,
  `{"id":"fake","input":{"prompt":"p","image":"images/fake.png"}}`,
  `{"id":"deep","input":"p","meta":{"x":${deep}}}`,
  `{"id":"proto","input":"p","__proto__":{"polluted":true},"constructor":"c"}`,
  `{"id":"term\\u001b[2Jx","input":"p"}`,
  `{"id":"term\\u001b[2Jx","input":"p"}`,
];
writeFileSync(join(folder, "hostile.jsonl"), rows.join("\n") + "\n");
writeFileSync(join(folder, "empty.jsonl"), "");

describe("evalrx data check / import on a hostile corpus", () => {
  it("refuses every image reference that leaves the folder or is not a usable image, per row, with its reason", () => {
    const run = evalrx("data", "check", join(folder, "hostile.jsonl"), "--json");
    expect(run.status, run.stderr).toBe(1);
    const { valid, problems } = JSON.parse(run.stdout) as {
      valid: number;
      problems: { line: number; reason: string }[];
    };
    const reason = (line: number) => problems.find((p) => p.line === line)?.reason;
    expect(valid).toBe(4); // good, also-good, proto, the first term… row
    expect(reason(3)).toMatch(/leaves the dataset's folder/);
    expect(reason(4)).toMatch(/is absolute/);
    expect(reason(5)).toMatch(/is absolute/);
    expect(reason(6)).toMatch(/is a link that leads out of the dataset's folder/);
    expect(reason(7)).toMatch(/is a FIFO \(named pipe\), not an image file/);
    expect(reason(8)).toMatch(/is a directory, not an image file/);
    expect(reason(9)).toMatch(/60000×60000 pixels, over the 40-megapixel limit/);
    expect(reason(10)).toMatch(/a PNG that does not decode/);
    expect(reason(11)).toMatch(/nested deeper than 64 levels/);
    expect(reason(14)).toMatch(/duplicate id/);
  });

  it("prints names from the file with their control characters escaped", () => {
    const run = evalrx("data", "check", join(folder, "hostile.jsonl"));
    expect(run.stdout).not.toContain("\u001b");
    expect(run.stdout).toContain("duplicate id 'term\\x1b[2Jx'");
  });

  it("imports the valid rows only: no byte from outside the folder is stored, __proto__ stays a field", async () => {
    const store = join(top, "store");
    const run = evalrx("data", "import", join(folder, "hostile.jsonl"), "--store", store);
    expect(run.status, run.stderr).toBe(1);
    expect(run.stdout).toContain("4 case(s) added");
    expect(readdirSync(join(store, "images")).filter((f) => !f.endsWith(".type"))).toHaveLength(1);
    const cases = await (await FileStore.open(store)).cases("hostile");
    const proto = cases.find((c) => c.id === "proto")!;
    expect(Object.getPrototypeOf(proto.meta)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(proto.meta, "__proto__")?.value).toEqual({ polluted: true });
    expect(proto.meta["constructor"]).toBe("c");
  });

  it("an empty file is an error (exit 3), for check and import", () => {
    const check = evalrx("data", "check", join(folder, "empty.jsonl"));
    expect(check.status).toBe(3);
    expect(check.stderr).toMatch(/empty\.jsonl holds no rows \(the file is empty\)/);
    const imported = evalrx("data", "import", join(folder, "empty.jsonl"), "--store", join(top, "store2"));
    expect(imported.status).toBe(3);
    expect(imported.stderr).toMatch(/empty/);
  });
});

describe.skipIf(!haveModel)("evalrx eval on hostile inputs", () => {
  const dataset = (dir: string, lines: object[]) => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "arith.jsonl"), lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const config = join(dir, "eval.json");
    writeFileSync(config, JSON.stringify({ dataset: "arith.jsonl", model: "tiny-lm", evaluators: ["exact"] }));
    return config;
  };
  const item = (id: string, prompt: string, expected: string) => ({ id, input: prompt, expected });

  it("a dataset file named like a stored one, with other cases, goes in beside it as a new version", async () => {
    const store = join(top, "eval-store");
    const first = evalrx(
      "eval",
      dataset(join(top, "a"), [item("a1", "reverse 1 2 =", "2 1"), item("a2", "reverse 3 4 =", "4 3")]),
      "--store",
      store,
    );
    expect(first.status, first.stderr).toBe(0);
    const second = evalrx("eval", dataset(join(top, "b"), [item("b1", "reverse 5 6 =", "6 5")]), "--store", store);
    expect(second.status, second.stderr).toBe(0);
    expect(second.stderr).toMatch(
      /note: the store's dataset 'arith' holds other cases .*stored beside them as 'arith@[0-9a-f]{12}', and the stored cases stay/,
    );
    const s = await FileStore.open(store);
    expect((await s.cases("arith")).map((c) => c.id)).toEqual(["a1", "a2"]);
    const versions = (await s.listDatasets()).map((d) => d.id);
    expect(versions).toHaveLength(2);
    const other = versions.find((id) => id !== "arith")!;
    expect((await s.cases(other)).map((c) => c.id)).toEqual(["b1"]);
    // Both runs are runs of one eval (the file's name): the second can gate against the first.
    const runs = await s.listRuns({ kind: "eval" });
    expect(new Set(runs.map((r) => (r.config as { eval: string }).eval))).toEqual(new Set(["arith:exact"]));
  });

  it("a case whose image leaves the folder errors alone, naming the case; the run goes on", async () => {
    const dir = join(top, "img");
    const config = dataset(dir, [
      { id: "ok", input: "reverse 1 2 =", expected: "2 1" },
      { id: "out", input: { prompt: "reverse 3 4 =", image: "../outside/secret.png" }, expected: "4 3" },
    ]);
    const store = join(top, "img-store");
    const run = evalrx("eval", config, "--store", store, "--json");
    expect(run.status, run.stderr).toBe(0);
    const s = await FileStore.open(store);
    const [r] = await s.listRuns();
    const items = await s.items(r!.id);
    expect(items.find((i) => i.caseId === "out")!.error).toMatch(
      /^case 'out': image path "\.\.\/outside\/secret\.png" leaves the dataset's folder/,
    );
    expect(items.find((i) => i.caseId === "ok")!.error).toBeUndefined();
  });
});
