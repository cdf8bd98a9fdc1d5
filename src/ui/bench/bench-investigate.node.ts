/**
 * The investigation and report parts of `npm run bench:app` alone (the 600-case demo investigation, page vs CLI,
 * and the report view), for working on them without the 100k-case and eval benches: `npx tsx
 * src/ui/bench/bench-investigate.node.ts [investigate|report]…` (both by default). Prints the load average
 * beside the figures: these machines are shared. Each step says on stderr when it starts and, once a minute, what
 * it still waits for; every wait has a limit and ends the bench with what the page showed, never a silent hang.
 */
import { readFileSync } from "node:fs";
import { startBrowserHarness } from "../../node/browser-harness.ts";
import { waitForEngineCheck } from "./engine-check-wait.ts";
import { step } from "./bench-steps.ts";

const line = (label: string, value: string) => console.log(`${label.padEnd(44)} ${value}`);
const load = () => readFileSync("/proc/loadavg", "utf8").trim();
const which = process.argv.slice(2);
const wants = (name: string) => which.length === 0 || which.includes(name);

const harness = await step("building and serving the app", () => startBrowserHarness());
try {
  const page = await harness.context.newPage();
  await step("adding the demo datasets", async () => {
    await page.goto(harness.url);
    await page.getByTestId("library-add-demo").click();
    await page.getByText(/\b3\b datasets/).waitFor({ timeout: 300_000 });
  });
  // A first visit measures WASM against WebGPU once (seconds of both cores) and remembers the choice: let it
  // finish here, so it does not run inside the page's timed investigation.
  const check = await step("the first visit's engine check", () => waitForEngineCheck(page, harness.url, 300_000));
  line("engine check", check);
  await page.close();
  if (wants("investigate")) {
    line("load average before", load());
    const { benchInvestigateVisits, returningVisit } = await import("./investigate.bench.ts");
    const returning = await step("a returning user's browser: its earlier visit", () => returningVisit(harness.outDir));
    try {
      line("  engine check (returning user's browser)", returning.check);
      await benchInvestigateVisits(harness, returning.visit, line);
    } finally {
      await returning.visit.harness.close();
    }
    line("load average after", load());
  }
  if (wants("report")) {
    line("load average before", load());
    await (await import("./report-render.bench.ts")).benchReportRender(harness, line);
    line("load average after", load());
  }
  if (harness.foreignRequests.length)
    console.log(`requests that left the machine: ${harness.foreignRequests.join(", ")}`);
} finally {
  await harness.close();
}
