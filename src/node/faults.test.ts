// The fault-injection suite's short slice (the long sweep is `npm run bench:faults`): the real `evalrx`
// binary killed with SIGKILL at a random moment and at the worst moments (the resume window, the report
// being written), a second writer started beside it, its disk filled mid-run; every time checked against an
// uninterrupted run: nothing lost, nothing judged twice, the same result.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseEventLines } from "../agent/events.ts";
import {
  checkInvestigationStore,
  checkRunIntegrity,
  decisions,
  killWhen,
  onlyRun,
  prng,
  readReport,
  runCli,
  startCli,
  storedItemCount,
  trialsOf,
  writeEvalConfig,
} from "./fault-harness.ts";

const haveModel = existsSync(new URL("../../models/tiny-vlm/onnx/decoder_model_merged.onnx", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "evalrx-faults-"));
const mounted: string[] = [];

/** A small tmpfs of its own (root only), so a full disk is a real one; undefined where it cannot be made. */
function smallDisk(name: string, size = "8m"): string | undefined {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { stdio: "ignore" });
    mounted.push(dir);
    return dir;
  } catch {
    return undefined;
  }
}

/** Fills the filesystem holding `dir` (a test tmpfs) with one file; returns its path to free the space again. */
function fill(dir: string): string {
  const filler = join(dir, "filler");
  try {
    execFileSync("dd", ["if=/dev/zero", `of=${filler}`, "bs=64k"], { stdio: "ignore" });
  } catch {
    // dd stops at ENOSPC with a non-zero status: the disk is full, as wanted.
  }
  return filler;
}

afterAll(() => {
  for (const dir of mounted) execFileSync("umount", [dir]);
  rmSync(work, { recursive: true, force: true });
});

describe.skipIf(!haveModel)("fault injection: evalrx eval", () => {
  const config = writeEvalConfig(join(work, "eval"));
  let reference: Map<string, string>;

  beforeAll(async () => {
    const r = await runCli(["eval", config, "--store", join(work, "eval", "ref")]);
    expect(r.code, r.err).toBe(0);
    const run = (await onlyRun(join(work, "eval", "ref")))!;
    const { items, problems } = await checkRunIntegrity(join(work, "eval", "ref"), run);
    expect(problems).toEqual([]);
    expect(items).toHaveLength(180);
    reference = trialsOf(items);
  }, 120_000);

  it("killed -9 at a random item, then resumed: every trial once, the same outputs and verdicts", async () => {
    const store = join(work, "eval", "killed");
    const at = 20 + Math.floor(prng(1)() * 140);
    const first = await killWhen(startCli(["eval", config, "--store", store]), () => storedItemCount(store) >= at);
    expect(first.killed).toBe(true);
    const run = (await onlyRun(store))!;
    expect(storedItemCount(store)).toBeLessThan(180);
    const resumed = await runCli(["eval", config, "--store", store, "--resume", run]);
    expect(resumed.code, resumed.err).toBe(0);
    const { items, problems } = await checkRunIntegrity(store, run);
    expect(problems).toEqual([]);
    expect(trialsOf(items)).toEqual(reference);
  }, 120_000);

  it("a second writer on the same run is refused up front, and the first finishes untouched", async () => {
    const store = join(work, "eval", "two");
    // A longer run (900 trials), so it is still judging when the rival starts (the rival locks before loading a model).
    const long = writeEvalConfig(join(work, "eval-long"), 300, 3);
    const first = startCli(["eval", long, "--store", store]);
    let rival: Awaited<ReturnType<typeof runCli>> | undefined;
    await killWhen({ ...first, kill: () => undefined }, async () => {
      if (storedItemCount(store) < 5) return false;
      rival = await runCli(["eval", config, "--store", store, "--resume", (await onlyRun(store))!]);
      return true;
    });
    const done = await first.done;
    expect(done.code, done.err).toBe(0);
    expect(rival!.code).toBe(3);
    expect(rival!.err).toMatch(/run 'fault-pope-[^']+' already has a writer: process \d+ on host .*, writing run/);
    const { items, problems } = await checkRunIntegrity(store, (await onlyRun(store))!);
    expect(problems).toEqual([]);
    expect(items).toHaveLength(900);
  }, 120_000);

  it("a disk that fills mid-run stops it with the file named; freed, the run resumes to the same result", async () => {
    const disk = smallDisk("eval-disk");
    if (!disk) return; // not root: no tmpfs of our own (the store's /dev/full test covers the message)
    let filler = "";
    const first = await killWhen({ ...startCli(["eval", config, "--store", disk]), kill: () => undefined }, () => {
      if (storedItemCount(disk) < 30) return false;
      filler = fill(disk);
      return true;
    });
    expect(first.code).toBe(3);
    expect(first.err).toMatch(/the disk is full writing .*items\.jsonl; nothing of this write was kept/);
    rmSync(filler);
    const run = (await onlyRun(disk))!;
    const resumed = await runCli(["eval", config, "--store", disk, "--resume", run]);
    expect(resumed.code, resumed.err).toBe(0);
    const { items, problems } = await checkRunIntegrity(disk, run);
    expect(problems).toEqual([]);
    expect(trialsOf(items)).toEqual(reference);
  }, 120_000);
});

/** Whole lines in an investigation's event log under `out` (0 before it exists): how far the run has got. */
function eventLines(out: string): number {
  const log = join(out, "events.jsonl");
  if (!existsSync(log)) return 0;
  const text = readFileSync(log, "utf8");
  return text
    .slice(0, text.lastIndexOf("\n") + 1)
    .split("\n")
    .filter(Boolean).length;
}

describe.skipIf(!haveModel)("fault injection: evalrx investigate", () => {
  const args = ["investigate", "--sample", "40", "--seed", "1", "--max-tier", "L1"];
  let reference: ReturnType<typeof decisions>;

  beforeAll(async () => {
    const r = await runCli([...args, "--out", join(work, "inv-ref"), "--json"]);
    expect(r.code, r.err).toBe(0);
    reference = decisions(readReport(join(work, "inv-ref"))!);
  }, 120_000);

  it("killed -9 at a random moment, then resumed: the same decisions, no case judged twice", async () => {
    const out = join(work, "inv-killed");
    // A random moment measured in progress, not on the clock: once the log holds the k-th event of the
    // uninterrupted run's, k within its first four fifths (on an idle machine a 40-case run can finish
    // inside any fixed delay, and the resume then finds nothing to resume).
    const total = eventLines(join(work, "inv-ref"));
    const at = 1 + Math.floor(prng(2)() * Math.floor(total * 0.8));
    const killed = await killWhen(startCli([...args, "--out", out]), () => eventLines(out) >= at);
    expect(killed.signal, "the run ended before the kill").toBe("SIGKILL");
    const resumed = await runCli(
      [...args, "--out", out, existsSync(join(out, "events.jsonl")) ? "--resume" : ""].filter(Boolean),
    );
    expect(resumed.code, resumed.err).toBe(0);
    expect(decisions(readReport(out)!)).toEqual(reference);
    expect(await checkInvestigationStore(out)).toEqual([]);
  }, 120_000);

  it("killed before its first event was durable (an empty or torn log), --resume starts it afresh", async () => {
    for (const [name, content] of [
      ["inv-empty", ""],
      ["inv-torn", '{"seq":0,"type":"run.sta'],
    ] as const) {
      const out = join(work, name);
      mkdirSync(out, { recursive: true });
      writeFileSync(join(out, "events.jsonl"), content);
      const resumed = await runCli([...args, "--out", out, "--resume"]);
      expect(resumed.code, resumed.err).toBe(0);
      expect(resumed.out + resumed.err).toMatch(/holds no run.started event .* starting it afresh/);
      expect(readFileSync(join(out, "events.interrupted-1.jsonl"), "utf8")).toBe(content);
      expect(decisions(readReport(out)!)).toEqual(reference);
      expect(await checkInvestigationStore(out)).toEqual([]);
    }
  }, 240_000);

  it("killed after the report is written but before it is marked finished, then in the resume window: resumes whole; other options refused", async () => {
    const out = join(work, "inv-aimed");
    const first = await runCli([...args, "--out", out], { env: { EVALRX_FAULT_AT: "report-written" } });
    expect(first.signal).toBe("SIGKILL");
    const log = () => parseEventLines(readFileSync(join(out, "events.jsonl"), "utf8"));
    expect(log().some((e) => e.type === "run.finished")).toBe(false); // not finished: its report was not durable yet
    const second = await runCli([...args, "--out", out, "--resume"], { env: { EVALRX_FAULT_AT: "resume-rewrite" } });
    expect(second.signal).toBe("SIGKILL");
    // Killed between keeping the old log and writing the new one: the log is whole, never empty.
    expect(log()[0]!.type).toBe("run.started");
    // Resuming it with other options is refused, each difference named.
    const other = await runCli([
      "investigate",
      "--sample",
      "30",
      "--seed",
      "2",
      "--max-tier",
      "L1",
      "--out",
      out,
      "--resume",
    ]);
    expect(other.code).toBe(3);
    expect(other.err).toMatch(
      /--resume: this command line differs from the run in .*: --data\/--sample select 30 case\(s\) .* where the run had 40 .*; --seed is 2 where the run used 1\./,
    );
    const third = await runCli([...args, "--out", out, "--resume"]);
    expect(third.code, third.err).toBe(0);
    expect(log().at(-1)!.type).toBe("run.finished");
    expect(decisions(readReport(out)!)).toEqual(reference);
    expect(await checkInvestigationStore(out)).toEqual([]);
  }, 120_000);

  it("a full disk while the report is written: the file is named, the run is not marked finished, resume writes it", async () => {
    const disk = smallDisk("inv-disk");
    if (!disk) return;
    const first = await runCli([...args, "--out", disk], { env: { EVALRX_FAULT_AT: "report-write:fill" } });
    expect(first.code).toBe(3);
    expect(first.err).toMatch(/the disk is full writing .*report\.(json|html); the file was left as it was/);
    expect(
      parseEventLines(readFileSync(join(disk, "events.jsonl"), "utf8")).some((e) => e.type === "run.finished"),
    ).toBe(false);
    rmSync(join(disk, ".evalrx-fault-filler"));
    const resumed = await runCli([...args, "--out", disk, "--resume"]);
    expect(resumed.code, resumed.err).toBe(0);
    expect(decisions(readReport(disk)!)).toEqual(reference);
  }, 120_000);

  it("a second investigate on the same --out is refused while the first runs", async () => {
    const out = join(work, "inv-two");
    // The first waits just before its report, holding the folder, until the rival has been answered.
    const first = startCli([...args, "--out", out], { env: { EVALRX_FAULT_AT: "report-write:pause" } });
    let ended = false;
    void first.done.then(() => (ended = true));
    while (!ended && !existsSync(join(out, ".evalrx-fault-paused"))) await new Promise((go) => setTimeout(go, 20));
    const rival = await runCli([...args, "--out", out]);
    writeFileSync(join(out, ".evalrx-fault-resume"), "");
    const done = await first.done;
    expect(done.code, done.err).toBe(0);
    expect(rival.code, rival.err).toBe(3);
    expect(rival.err).toMatch(/the output folder .*inv-two already has a writer: process \d+ on host/);
    expect(decisions(readReport(out)!)).toEqual(reference);
  }, 120_000);
});
