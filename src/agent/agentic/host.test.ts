import Ajv2020 from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importDataset } from "../../datasets/index.ts";
import { openAICompatibleJudge } from "../../evals/judge.ts";
import { syntheticLog, toCsv } from "../bench/synthetic.ts";
import { casesToTable } from "../cases-table.ts";
import { EventLog } from "../events.ts";
import schema from "../events.schema.json" with { type: "json" };
import { childSandbox } from "../sandbox/child-sandbox.node.ts";
import type { CaseTable } from "../signals.ts";
import type { Board } from "./board.ts";
import { runAgentic, type AgenticJudge, type AgenticOptions } from "./host.ts";
import { STANDARD_ANALYSIS, rulePolicy, textJudge } from "./judges.ts";
import { buildReport } from "../report.ts";
import { allSections, reportView } from "../../report/view.ts";
import { tablePipeline } from "./table-pipeline.ts";
import { boardServer, type BoardServer } from "./board-server.node.ts";

async function plantedTable(
  seed: number,
  extra?: (row: Record<string, unknown>, i: number) => void,
): Promise<CaseTable> {
  const rows = syntheticLog({ seed, n: 400 }).rows;
  if (extra) rows.forEach(extra);
  const { cases } = await importDataset(toCsv(rows), { name: "log.csv", mapping: { label: "passed" } });
  // row/model_name are an identifier and a constant: dropped as the explore command's exclusions would.
  const { table } = casesToTable(cases);
  const columns = new Map([...table.columns].filter(([k]) => k !== "row" && k !== "model_name" && k !== "prompt"));
  return { ...table, columns };
}

function validator() {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  ajv.addFormat("date-time", (s: string) => !Number.isNaN(Date.parse(s)));
  return ajv.compile(schema);
}

const fast = { resamples: { explore: 100, sealed: 400 } } as const;
const protocol = { question: "What predicts the failures?" };
const sandbox = childSandbox({ timeMs: 3000 });

/** A judge that says exactly these replies, in order (then stops without a claim). */
function scripted(replies: readonly (string | ((board: Board) => string))[]): AgenticJudge & { boards: Board[] } {
  const boards: Board[] = [];
  let k = 0;
  return {
    id: "scripted",
    boards,
    next: async (_prompt, board) => {
      boards.push(board);
      const r = replies[k++] ?? '{"tool":"stop","args":{"success":false,"summary":"script over"}}';
      return typeof r === "function" ? r(board) : r;
    },
  };
}

const call = (tool: string, args: Record<string, unknown> = {}, why = "scripted") =>
  JSON.stringify({ tool, args, why });

describe("the agentic loop with the rule policy", () => {
  it("probes, tests, runs its own analysis, freezes, decides on the sealed split and stops through the gate", async () => {
    // `shadow` is a weaker second signal: the screen keeps at most one signal here, the analysis suggests it.
    const table = await plantedTable(11, (row, i) => {
      row.shadow = Number(row.planted) * 0.5 + Math.sin(i * 12.9898) * 0.8;
    });
    const log = new EventLog({ runId: "agentic-rules", now: () => 0 });
    log.append("setup", "run.started", {
      kind: "explore",
      question: protocol.question,
      seed: 1,
      alpha: 0.05,
      codeVersion: "test",
    });
    const out = await runAgentic(tablePipeline(table, "log.csv"), rulePolicy(), log, {
      protocol,
      seed: 1,
      sandbox,
      screen: { maxSelected: 1 },
      ...fast,
    });
    expect(out.turns.map((t) => `${t.tool}:${t.status}`)).toEqual([
      "run_probe:ran",
      "run_stats:ran",
      "cluster_failures:ran",
      "run_analysis:ran",
      "propose_hypotheses:ran",
      "test_hypothesis:ran",
      "stop:ran",
    ]);
    const analysis = out.state.analyses[0]!;
    expect(analysis.outcome.ok).toBe(true);
    expect(analysis.outcome.ok && analysis.outcome.output.tables[0]!.rows.length).toBeGreaterThan(5);
    // The analysis seeded a hypothesis beyond the screen, which M4 then decided on the sealed split.
    expect(out.state.seeded?.length).toBeGreaterThan(0);
    const seededSignal = out.state.seeded![0]!.signal;
    expect(out.state.seeded![0]!.by).toBe("A1");
    expect(out.state.hypotheses!.map((h) => h.signal)).toContain(seededSignal);
    expect(out.state.verified!.map((v) => v.id)).toEqual(out.state.hypotheses!.map((h) => h.id));
    const planted = out.state.hypotheses!.find((h) => h.signal === "planted")!;
    expect(out.stop).toMatchObject({ by: "judge", success: true, hypothesis: planted.id });
    // Order in the log: the analysis and the freeze come before the one sealed read.
    const seq = (type: string) => log.find(type)!.seq;
    expect(seq("analysis.ran")).toBeLessThan(seq("hypotheses.frozen"));
    expect(seq("hypotheses.frozen")).toBeLessThan(seq("sealed.opened"));
    expect(log.all("sealed.opened")).toHaveLength(1);
    const validate = validator();
    for (const e of log.events) expect(validate(e), `${e.type}: ${JSON.stringify(validate.errors)}`).toBe(true);
    expect(log.all("agentic.turn")).toHaveLength(7);
    expect(log.find("agentic.stopped")!.payload).toMatchObject({ by: "judge", success: true, refused: 0 });
    // The report shows the path and the analysis as it ran; its view has both sections.
    log.append("setup", "data.loaded", {
      source: "log.csv",
      fingerprint: "test",
      n: table.ids.length,
      labelColumn: "passed",
      labelDistribution: { fail: table.failed.filter(Boolean).length, pass: table.failed.filter((f) => !f).length },
    });
    const report = buildReport(log.events);
    expect(report.agentic!.turns.map((t) => t.tool)).toEqual(out.turns.map((t) => t.tool));
    expect(report.agentic!.stop).toMatchObject({ success: true, hypothesis: planted.id });
    expect(report.analyses![0]).toMatchObject({ id: "A1", author: "rules", code: STANDARD_ANALYSIS, ok: true });
    expect(report.analyses![0]!.fingerprint).toBe(analysis.fingerprint);
    const view = reportView(report);
    const ids = [...allSections(view)].map((s) => s.id);
    expect(ids).toEqual(expect.arrayContaining(["agentic", "analyses", "analysis-A1"]));
    const code = [...allSections(view)].find((s) => s.id === "analysis-A1")!.blocks.find((b) => b.kind === "code");
    expect(code).toMatchObject({ label: "analysis.js as it ran", text: STANDARD_ANALYSIS });
  });

  it("stops without a claim when nothing predicts failure", async () => {
    const table = await plantedTable(3);
    const noise: CaseTable = { ...table, columns: new Map([...table.columns].filter(([k]) => k !== "planted")) };
    const log = new EventLog({ runId: "agentic-null", now: () => 0 });
    const out = await runAgentic(tablePipeline(noise, "log.csv"), rulePolicy({ analysis: false }), log, {
      protocol,
      seed: 2,
      ...fast,
    });
    expect(out.stop.success).toBe(false);
    expect(out.state.verified?.every((v) => v.verdict !== "SUPPORTED") ?? true).toBe(true);
  });
});

describe("the host refuses every rule violation of a scripted judge, and each refused turn counts", () => {
  it("malformed replies, unknown tools, bad arguments, preconditions, caps, the sealed split and the stop gate", async () => {
    const table = await plantedTable(11);
    const log = new EventLog({ runId: "agentic-violations", now: () => 0 });
    const judge = scripted([
      "I think we should look at the data first.",
      call("run_everything"),
      JSON.stringify({ tool: "run_stats", args: {}, why: "x", extra: 1 }),
      call("run_stats"),
      call("test_hypothesis"),
      call("stop", { success: true, hypothesis: "H1", summary: "claimed early" }),
      call("run_probe", { cases: 10 }),
      call("run_probe"),
      call("run_probe"),
      call("propose_hypotheses"),
      call("run_analysis", { code: "return {}" }),
      call("run_stats"),
      call("propose_hypotheses", { signals: ["no_such_signal"] }),
      call("run_surgery", { hypothesis: "H1" }),
      call("test_hypothesis"),
      // A noise column the screen left out, named by the judge: frozen beside the planted one, decided on the sealed split.
      call("propose_hypotheses", { signals: ["noise_num_0"] }),
      call("test_hypothesis"),
      call("test_hypothesis"),
      call("run_fix"),
      call("stop", { success: true, summary: "no id" }),
      call("stop", { success: true, hypothesis: "H9" }),
      (board) =>
        call("stop", { success: true, hypothesis: board.hypotheses!.find((h) => h.signal === "noise_num_0")!.id }),
    ]);
    const options: AgenticOptions = { protocol, seed: 1, maxTurns: 30, ...fast };
    const out = await runAgentic(tablePipeline(table, "log.csv"), judge, log, options);
    const reasons = out.turns.map((t) => (t.status === "refused" ? t.reason : `ran ${t.tool}`));
    expect(reasons.slice(0, 11)).toEqual([
      expect.stringMatching(/^malformed reply: the reply is not JSON/),
      expect.stringMatching(/'tool' must be one of run_probe, .*; got "run_everything"/),
      "malformed reply: the reply has a field 'extra'; allowed: tool, args, why",
      "run_probe has not run: there are no labelled cases or signals yet",
      "the hypotheses are not frozen yet (propose_hypotheses first)",
      "success needs a hypothesis tested on the sealed split, and test_hypothesis has not run",
      "malformed reply: run_probe takes no arguments; got 'cases'",
      "ran run_probe",
      "run_probe has used its cap of 1 call",
      "run_stats has not run: hypotheses come from the tested signals",
      "no analysis sandbox is configured for this run",
    ]);
    expect(reasons[11]).toBe("ran run_stats");
    expect(reasons[12]).toMatch(
      /propose_hypotheses names 'no_such_signal', which run_stats did not test; tested signals are /,
    );
    expect(reasons[13]).toBe("no model to intervene on in this run");
    expect(reasons[14]).toBe("the hypotheses are not frozen yet (propose_hypotheses first)");
    expect(reasons[15]).toBe("ran propose_hypotheses");
    expect(reasons[16]).toBe("ran test_hypothesis");
    expect(reasons[17]).toBe("test_hypothesis has used its cap of 1 call");
    expect(reasons[18]).toBe("no model to repair in this run (or the repair ceiling is none)");
    expect(reasons[19]).toMatch(/^success must name the hypothesis it rests on \(args\.hypothesis\); SUPPORTED: H\d/);
    expect(reasons[20]).toMatch(/^'H9' was not tested on the sealed split \(tested: H1/);
    expect(out.state.seeded).toEqual([{ signal: "noise_num_0", by: "named by scripted" }]);
    expect(reasons[21]).toMatch(/^H2 is (REFUTED|INCONCLUSIVE) on the sealed split, not SUPPORTED: /);
    // The script ran out: its last word is a stop without a claim, which the gate lets through.
    expect(out.stop).toMatchObject({ by: "judge", success: false, summary: "script over" });
    expect(log.all("sealed.opened")).toHaveLength(1);
    expect(log.all("agentic.turn").filter((e) => e.payload.status === "refused").length).toBe(
      out.turns.filter((t) => t.status === "refused").length,
    );
    // The judge is shown its refusals on the board.
    expect(judge.boards[1]!.refused[0]!.reason).toMatch(/malformed reply/);
    expect(judge.boards[0]!.available).toEqual(["run_probe", "stop"]);
  });

  it("enforces the model-call budget and ends a judge that never stops at the turn limit", async () => {
    const table = await plantedTable(11);
    const pipeline = { ...tablePipeline(table, "log.csv"), probe: { ...tablePipeline(table, "x").probe, cost: 500 } };
    const log = new EventLog({ runId: "agentic-budget", now: () => 0 });
    const out = await runAgentic(pipeline, scripted(Array(5).fill(call("run_probe"))), log, {
      protocol,
      modelCallBudget: 100,
      maxTurns: 3,
    });
    expect(out.turns.map((t) => t.reason)).toEqual(
      Array(3).fill("run_probe would spend about 500 model calls; 100 of the budget of 100 are left"),
    );
    expect(out.stop).toMatchObject({ by: "host", success: false });
    expect(out.stop.summary).toMatch(/did not stop within 3 turns/);
  });

  it("refuses the turn of a judge that cannot answer, with its error, and goes on; a cancel still ends the loop", async () => {
    const table = await plantedTable(11);
    const log = new EventLog({ runId: "agentic-unanswered", now: () => 0 });
    // What the page's tiny-lm judge does with a board longer than its context: the model refuses the prompt.
    let asked = 0;
    const failing: AgenticJudge = {
      id: "model:tiny-lm",
      next: async () => {
        asked++;
        if (asked === 2) return call("run_probe", {}, "label first");
        throw new Error("the prompt is 211 tokens, over tiny-lm's context length of 64: shorten it");
      },
    };
    const out = await runAgentic(tablePipeline(table, "log.csv"), failing, log, { protocol, maxTurns: 3 });
    expect(out.turns.map((t) => [t.status, t.tool, t.reason])).toEqual([
      [
        "refused",
        null,
        "the judge could not answer: the prompt is 211 tokens, over tiny-lm's context length of 64: shorten it",
      ],
      ["ran", "run_probe", undefined],
      [
        "refused",
        null,
        "the judge could not answer: the prompt is 211 tokens, over tiny-lm's context length of 64: shorten it",
      ],
    ]);
    expect(out.stop).toMatchObject({ by: "host", success: false });
    expect(log.events.filter((e) => e.type === "agentic.turn")).toHaveLength(3);
    const validate = validator();
    for (const e of log.events) expect(validate(e), `${e.type}: ${JSON.stringify(validate.errors)}`).toBe(true);

    const controller = new AbortController();
    const cancelled: AgenticJudge = {
      id: "cancelled",
      next: async () => {
        controller.abort(new Error("cancelled by the user"));
        throw new Error("fetch aborted");
      },
    };
    await expect(
      runAgentic(tablePipeline(table, "log.csv"), cancelled, new EventLog({ runId: "c", now: () => 0 }), {
        protocol,
        signal: controller.signal,
      }),
    ).rejects.toThrow("cancelled by the user");
  });
});

describe("an OpenAI-compatible judge served over HTTP", () => {
  let server: BoardServer;
  beforeAll(async () => {
    server = await boardServer();
  });
  afterAll(() => server.close());

  it("drives the loop through the protocol, each turn one request with the board", async () => {
    const table = await plantedTable(11);
    const log = new EventLog({ runId: "agentic-http", now: () => 0 });
    const judge = textJudge(openAICompatibleJudge({ baseUrl: server.baseUrl, model: "board-reader", maxTokens: 512 }));
    const out = await runAgentic(tablePipeline(table, "log.csv"), judge, log, { protocol, seed: 1, ...fast });
    expect(out.stop).toMatchObject({ by: "judge", success: true });
    expect(server.requests.length).toBe(out.turns.length);
    expect(server.requests[0]!.model).toBe("board-reader");
    expect(server.requests[0]!.messages.at(-1)!.content).toMatch(/Reply with ONE JSON object/);
    expect(log.find("agentic.started")!.payload.judge).toBe(
      `openai:${new URL(server.baseUrl).origin}/v1/chat/completions#board-reader`,
    );
  });
});
