// npm run bench:faults — the fault-injection sweep (the tests run a short slice of it: src/node/faults.test.ts).
// For `evalrx eval` and `evalrx investigate` on the bundled tiny VLM: at least FAULT_KILLS (default 20) SIGKILLs
// each at seeded random moments, every interrupted run resumed (and killed again) until it finishes; kills aimed at
// the resume window and at report writing; a second writer beside a running one; a disk that fills mid-run (on a
// tmpfs, when run as root). Every finished run is compared with an uninterrupted one: nothing lost, nothing judged
// twice, the same outputs, verdicts and decisions. Prints one line per scenario and exits 1 on any difference.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { parseEventLines } from "../../agent/events.ts";
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
} from "../fault-harness.ts";

const KILLS = Number(process.env["FAULT_KILLS"] ?? 20);
const work = mkdtempSync(join(tmpdir(), "evalrx-bench-faults-"));
const failures: string[] = [];
const mounted: string[] = [];

function report(name: string, ok: boolean, detail: string) {
  console.log(`${ok ? "ok  " : "FAIL"} ${name.padEnd(34)} ${detail}`);
  if (!ok) failures.push(`${name}: ${detail}`);
}

function smallDisk(name: string): string | undefined {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", dir], { stdio: "ignore" });
    mounted.push(dir);
    return dir;
  } catch {
    return undefined;
  }
}

async function evalSweep() {
  const config = writeEvalConfig(join(work, "eval"), 100, 3);
  const ref = await runCli(["eval", config, "--store", join(work, "eval-ref")]);
  if (ref.code !== 0) throw new Error(`the uninterrupted eval failed: ${ref.err}`);
  const refRun = (await onlyRun(join(work, "eval-ref")))!;
  const reference = trialsOf((await checkRunIntegrity(join(work, "eval-ref"), refRun)).items);
  const total = reference.size;
  let kills = 0;
  let runs = 0;
  let equal = 0;
  const problems: string[] = [];
  for (let seed = 1; kills < KILLS; seed++) {
    const random = prng(seed);
    const store = join(work, `eval-${seed}`);
    let run: string | undefined;
    for (let attempt = 0; ; attempt++) {
      const args = ["eval", config, "--store", store, ...(run ? ["--resume", run] : [])];
      const at = storedItemCount(store) + 1 + Math.floor(random() * total * 0.5);
      const last = attempt >= 3; // at most three kills a run, then let it finish
      const r = last ? await runCli(args) : await killWhen(startCli(args), () => storedItemCount(store) >= at);
      run ??= await onlyRun(store);
      if (r.killed) {
        kills++;
        continue;
      }
      if (r.code !== 0) problems.push(`seed ${seed}: exit ${r.code}: ${r.err.trim().split("\n").pop()}`);
      break;
    }
    runs++;
    const { items, problems: integrity } = await checkRunIntegrity(store, run!);
    problems.push(...integrity.map((p) => `seed ${seed}: ${p}`));
    if (isDeepStrictEqual(trialsOf(items), reference)) equal++;
    else problems.push(`seed ${seed}: the outputs or verdicts differ from the uninterrupted run`);
  }
  report(
    "eval: random kill -9",
    problems.length === 0,
    `${kills} kills over ${runs} runs of ${total} trials; ${equal}/${runs} equal to the uninterrupted run${problems.length ? `; ${problems.join("; ")}` : ""}`,
  );

  // A second writer while one runs.
  const two = join(work, "eval-two");
  const long = writeEvalConfig(join(work, "eval-long"), 300, 3);
  const first = startCli(["eval", long, "--store", two]);
  let rival: Awaited<ReturnType<typeof runCli>> | undefined;
  await killWhen({ ...first, kill: () => undefined }, async () => {
    if (storedItemCount(two) < 5) return false;
    rival = await runCli(["eval", long, "--store", two, "--resume", (await onlyRun(two))!]);
    return true;
  });
  const firstDone = await first.done;
  const twoCheck = await checkRunIntegrity(two, (await onlyRun(two))!);
  report(
    "eval: two writers on one run",
    firstDone.code === 0 && rival?.code === 3 && /already has a writer/.test(rival.err) && !twoCheck.problems.length,
    `first exit ${firstDone.code}, second exit ${rival?.code} (${rival?.err.trim().split("\n")[0]?.slice(0, 90)}…); ${twoCheck.items.length} items, each once`,
  );

  // A full disk mid-run.
  const disk = smallDisk("eval-disk");
  if (!disk) return report("eval: full disk mid-run", true, "skipped (needs root to mount a small tmpfs)");
  let filler = "";
  const full = await killWhen({ ...startCli(["eval", config, "--store", disk]), kill: () => undefined }, () => {
    if (storedItemCount(disk) < 40) return false;
    filler = join(disk, "filler");
    try {
      execFileSync("dd", ["if=/dev/zero", `of=${filler}`, "bs=64k"], { stdio: "ignore" });
    } catch {
      // full
    }
    return true;
  });
  rmSync(filler, { force: true });
  const diskRun = (await onlyRun(disk))!;
  const resumed = await runCli(["eval", config, "--store", disk, "--resume", diskRun]);
  const diskCheck = await checkRunIntegrity(disk, diskRun);
  report(
    "eval: full disk mid-run",
    full.code === 3 &&
      /the disk is full writing .*items\.jsonl/.test(full.err) &&
      resumed.code === 0 &&
      !diskCheck.problems.length &&
      isDeepStrictEqual(trialsOf(diskCheck.items), reference),
    `exit ${full.code} (${full.err.trim().split("\n")[0]?.slice(0, 70)}…), resumed exit ${resumed.code}, equal to the uninterrupted run`,
  );
}

async function investigateSweep() {
  const args = ["investigate", "--sample", "40", "--seed", "1", "--max-tier", "L1"];
  const started = Date.now();
  const ref = await runCli([...args, "--out", join(work, "inv-ref")]);
  const span = Date.now() - started;
  if (ref.code !== 0) throw new Error(`the uninterrupted investigate failed: ${ref.err}`);
  const reference = decisions(readReport(join(work, "inv-ref"))!);
  let kills = 0;
  let runs = 0;
  let equal = 0;
  const problems: string[] = [];
  for (let seed = 1; kills < KILLS; seed++) {
    const random = prng(1000 + seed);
    const out = join(work, `inv-${seed}`);
    for (let attempt = 0; ; attempt++) {
      const resume = existsSync(join(out, "events.jsonl")) ? ["--resume"] : [];
      const delay = 200 + random() * span;
      const t0 = Date.now();
      const r =
        attempt >= 3
          ? await runCli([...args, "--out", out, ...resume])
          : await killWhen(startCli([...args, "--out", out, ...resume]), () => Date.now() - t0 > delay);
      if (r.killed) {
        kills++;
        continue;
      }
      if (r.code !== 0) problems.push(`seed ${seed}: exit ${r.code}: ${r.err.trim().split("\n").pop()}`);
      break;
    }
    runs++;
    problems.push(...(await checkInvestigationStore(out)).map((p) => `seed ${seed}: ${p}`));
    const got = readReport(out);
    if (got && isDeepStrictEqual(decisions(got), reference)) equal++;
    else problems.push(`seed ${seed}: the decisions differ from the uninterrupted run`);
  }
  report(
    "investigate: random kill -9",
    problems.length === 0,
    `${kills} kills over ${runs} runs; ${equal}/${runs} equal to the uninterrupted run${problems.length ? `; ${problems.join("; ")}` : ""}`,
  );

  // Aimed: after the report, before it is marked finished; then in the resume window; each seed's run once.
  let aimedOk = true;
  for (let seed = 1; seed <= 3; seed++) {
    const out = join(work, `inv-aimed-${seed}`);
    const a = await runCli([...args, "--out", out], { env: { EVALRX_FAULT_AT: "report-written" } });
    const b = await runCli([...args, "--out", out, "--resume"], { env: { EVALRX_FAULT_AT: "resume-rewrite" } });
    const whole = parseEventLines(readFileSync(join(out, "events.jsonl"), "utf8"))[0]?.type === "run.started";
    const c = await runCli([...args, "--out", out, "--resume"]);
    const same = isDeepStrictEqual(decisions(readReport(out)!), reference);
    aimedOk &&= a.signal === "SIGKILL" && b.signal === "SIGKILL" && whole && c.code === 0 && same;
  }
  report(
    "investigate: aimed kills",
    aimedOk,
    "3 × (kill after the report is written, kill in the resume window, resume)",
  );

  const disk = smallDisk("inv-disk");
  if (disk) {
    const full = await runCli([...args, "--out", disk], { env: { EVALRX_FAULT_AT: "report-write:fill" } });
    const unfinished = !parseEventLines(readFileSync(join(disk, "events.jsonl"), "utf8")).some(
      (e) => e.type === "run.finished",
    );
    rmSync(join(disk, ".evalrx-fault-filler"), { force: true });
    const resumed = await runCli([...args, "--out", disk, "--resume"]);
    report(
      "investigate: full disk at the report",
      full.code === 3 &&
        /the disk is full writing .*report/.test(full.err) &&
        unfinished &&
        resumed.code === 0 &&
        isDeepStrictEqual(decisions(readReport(disk)!), reference),
      `exit ${full.code}, not marked finished: ${unfinished}, resumed exit ${resumed.code}`,
    );
  } else report("investigate: full disk at the report", true, "skipped (needs root to mount a small tmpfs)");

  const out = join(work, "inv-two");
  const first = startCli([...args, "--out", out]);
  let rival: Awaited<ReturnType<typeof runCli>> | undefined;
  await killWhen({ ...first, kill: () => undefined }, async () => {
    if (!existsSync(join(out, "events.jsonl"))) return false;
    rival = await runCli([...args, "--out", out]);
    return true;
  });
  const done = await first.done;
  report(
    "investigate: two writers on one --out",
    done.code === 0 && rival?.code === 3 && /already has a writer/.test(rival.err),
    `first exit ${done.code}, second exit ${rival?.code}`,
  );
}

try {
  console.log(`bench:faults — at least ${KILLS} SIGKILLs per command (FAULT_KILLS to change)`);
  const t0 = Date.now();
  await evalSweep();
  await investigateSweep();
  console.log(
    `${failures.length ? `${failures.length} scenario(s) FAILED` : "every scenario held"} in ${((Date.now() - t0) / 1000).toFixed(0)} s`,
  );
  process.exitCode = failures.length ? 1 : 0;
} finally {
  for (const dir of mounted) execFileSync("umount", [dir]);
  rmSync(work, { recursive: true, force: true });
}
