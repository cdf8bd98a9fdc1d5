import { flushSync, mount, unmount } from "svelte";
import { afterEach, expect, it } from "vitest";
import { page } from "vitest/browser";
import { runAgentic } from "../../../agent/agentic/host.ts";
import { rulePolicy } from "../../../agent/agentic/judges.ts";
import { tablePipeline } from "../../../agent/agentic/table-pipeline.ts";
import { syntheticLog, toCsv } from "../../../agent/bench/synthetic.ts";
import { casesToTable } from "../../../agent/cases-table.ts";
import { EventLog } from "../../../agent/events.ts";
import { workerSandbox } from "../../../agent/sandbox/worker-sandbox.browser.ts";
import { importDataset } from "../../../datasets/index.ts";
import "../../styles/tokens.css";
import "../../styles/base.css";
import AgenticPanel from "./AgenticPanel.svelte";
import { agenticView } from "./agentic-turns.ts";

let mounted: ReturnType<typeof mount> | undefined;
afterEach(() => {
  if (mounted) unmount(mounted);
  mounted = undefined;
  document.body.innerHTML = "";
});

it("runs the loop in the page (analysis in the locked worker) and shows every turn, refusals included", async () => {
  const rows = syntheticLog({ seed: 11, n: 400 }).rows;
  const { cases } = await importDataset(toCsv(rows), { name: "log.csv", mapping: { label: "passed" } });
  const built = casesToTable(cases).table;
  const table = {
    ...built,
    columns: new Map([...built.columns].filter(([k]) => !["row", "model_name", "prompt"].includes(k))),
  };
  const log = new EventLog({ runId: "agentic-page", now: () => 0 });
  // The rule policy, after one rule-breaking reply a script slipped in first: the host refuses it and the turn counts.
  const policy = rulePolicy();
  let first = true;
  const judge = {
    id: "rules",
    next: async (prompt: string, board: Parameters<typeof policy.next>[1]) => {
      if (first) {
        first = false;
        return JSON.stringify({ tool: "test_hypothesis", args: {}, why: "skip ahead to the sealed split" });
      }
      return policy.next(prompt, board);
    },
  };
  const out = await runAgentic(tablePipeline(table, "log.csv"), judge, log, {
    protocol: { question: "What predicts the failures?" },
    seed: 1,
    sandbox: workerSandbox({ timeMs: 3000 }),
    resamples: { explore: 100, sealed: 400 },
  });
  expect(out.state.analyses[0]!.outcome.ok).toBe(true);
  expect(out.state.analyses[0]!.runtime).toMatch(/^page worker/);
  const view = agenticView(log.events)!;
  expect(view.refused).toBe(1);
  await page.viewport(1280, 900);
  const target = document.createElement("main");
  target.style.maxWidth = "1200px";
  target.style.margin = "1rem auto";
  document.body.append(target);
  mounted = mount(AgenticPanel, { target, props: { view } });
  flushSync();
  const turns = [...target.querySelectorAll('[data-testid^="agentic-turn-"]')];
  expect(turns).toHaveLength(out.turns.length);
  expect(turns[0]!.textContent).toMatch(/test_hypothesis\s*refused\s*the hypotheses are not frozen yet/);
  expect(target.querySelector('[data-testid="agentic-stop"]')!.textContent).toMatch(/success on H\d/);
  // The rule policy's analysis returned a bar figure: the panel draws it (one bar per signal, as the report does),
  // with its values one click away as a table.
  const analysis = target.querySelector('[data-testid="agentic-analysis-A1"]')!;
  expect(analysis.textContent).toMatch(/A1\s*standardized mean difference of every numeric signal\s*ran in \d+ ms/);
  const spec = out.state.analyses[0]!.outcome.ok ? out.state.analyses[0]!.outcome.output.figures[0]! : undefined;
  expect(spec?.kind).toBe("bar");
  const svg = analysis.querySelector('[data-testid="figure-analysis-A1-figure-1"] svg')!;
  expect(svg.querySelectorAll("rect.bar")).toHaveLength(spec!.x.length);
  expect(svg.getAttribute("aria-label")).toMatch(
    /^Largest standardized differences: \d+ bars?; d \(failures − passes\) from /,
  );
  expect(analysis.textContent).toMatch(/1\s+table, the code as it ran and its input's fingerprint are in the report/);
  await page.screenshot({ path: "../../../../tmp/screens/agentic-panel.png" });
  await page.screenshot({ path: "../../../../tmp/h18/agentic-panel-analysis.png" });
});

it("says which field of a figure spec it cannot draw, and still shows the spec's values", async () => {
  const log = new EventLog({ runId: "agentic-bad-figure", now: () => 0 });
  log.append("setup", "agentic.started", { judge: "rules", maxTurns: 20, caps: {}, tools: [], sandbox: "page worker" });
  log.append("M2", "analysis.ran", {
    id: "A1",
    author: "judge",
    purpose: "entropy against image share",
    code: "return {}",
    input: { fingerprint: "f", n: 40 },
    runtime: "page worker",
    ok: true,
    ms: 9,
    output: {
      tables: [],
      figures: [{ kind: "scatter", title: "<b>Entropy</b> by share", x: ["low", "high"], y: [1.5, 0.25] }],
      notes: [],
      suggestions: [],
    },
  });
  const target = document.createElement("main");
  document.body.append(target);
  mounted = mount(AgenticPanel, { target, props: { view: agenticView(log.events)! } });
  flushSync();
  const analysis = target.querySelector('[data-testid="agentic-analysis-A1"]')!;
  expect(analysis.textContent).toContain(
    'A1\'s figure 1 (<b>Entropy</b> by share) could not be drawn: A1 figures[0].x[0] must be a number (a scatter places each point by its x), got "low". Its values are in the table below.',
  );
  expect(analysis.querySelector("b")).toBeNull();
  const cells = [...analysis.querySelectorAll("table tbody tr")].map((tr) =>
    [...tr.querySelectorAll("td")].map((td) => td.textContent?.trim()),
  );
  expect(cells).toEqual([
    ["low", "1.5"],
    ["high", "0.25"],
  ]);
  expect(analysis.querySelector("svg")).toBeNull();
});
