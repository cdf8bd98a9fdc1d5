import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importTable } from "../datasets/index.ts";
import { openAICompatibleJudge } from "../evals/index.ts";
import { syntheticLog } from "./bench/synthetic.ts";
import { consistency } from "./judge.ts";
import { exploreCases } from "./run-explore.ts";

/** A small local server speaking the OpenAI chat-completions protocol, answering by rule. */
let server: Server;
let baseUrl = "";
const seen: { auth?: string; model?: string; prompt: string }[] = [];
let consistent = "YES";

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
        res.writeHead(404).end("not found");
        return;
      }
      const parsed = JSON.parse(body) as { model: string; messages: { role: string; content: string }[] };
      const prompt = parsed.messages.at(-1)!.content;
      seen.push({ auth: req.headers.authorization, model: parsed.model, prompt });
      const content = prompt.includes("falsifiable mechanism")
        ? "cases with a high planted score overload the model's decision rule\nextra text"
        : prompt.startsWith("Critique")
          ? "a confounder correlated with planted could explain it; no effect on fresh cases would refute it"
          : `${consistent}: judged by the local test server`;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ choices: [{ message: { role: "assistant", content } }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const cases = () => importTable(syntheticLog({ seed: 31 }).rows, { label: "passed", input: "prompt" }).cases;

describe("judges: rule-based by default, an OpenAI-compatible endpoint when configured", () => {
  it("the endpoint writes the mechanism and decides the protocol gate; the verdicts follow", async () => {
    consistent = "YES";
    const judge = openAICompatibleJudge({ baseUrl, model: "local-judge", apiKey: "k-123" });
    const { report } = await exploreCases(cases(), { seed: 1, judge, resamples: { explore: 50, sealed: 300 } });
    const h = report.hypotheses.find((x) => x.signal === "planted")!;
    expect(h.author).toBe("judge");
    expect(h.mechanism).toBe("cases with a high planted score overload the model's decision rule");
    expect(h.gates!.protocol).toMatchObject({ consistent: true, by: "judge" });
    expect(h.refutation).toMatch(/Judge's critique: a confounder correlated with planted/);
    expect(h.verdict).toBe("SUPPORTED");
    expect(seen.every((s) => s.auth === "Bearer k-123" && s.model === "local-judge")).toBe(true);
  });

  it("a judge that says the hypothesis does not answer the question keeps it from SUPPORTED", async () => {
    consistent = "NO";
    const judge = openAICompatibleJudge({ baseUrl, model: "local-judge" });
    const { report } = await exploreCases(cases(), { seed: 1, judge, resamples: { explore: 50, sealed: 300 } });
    const h = report.hypotheses.find((x) => x.signal === "planted")!;
    expect(h.gates!.statistical.passed).toBe(true);
    expect(h.gates!.protocol.consistent).toBe(false);
    expect(h.verdict).toBe("INCONCLUSIVE");
    expect(h.reason).toMatch(/does not answer the question asked/);
  });

  it("without a judge the rules decide; a question about attention is not answered by a prompt-length signal", async () => {
    expect(await consistency({ question: "What predicts the failures?" }, "H1", ["prompt"])).toMatchObject({
      consistent: true,
      by: "rules",
    });
    expect(await consistency({ question: "Do failures attend less to the image?" }, "H1", ["length"])).toMatchObject({
      consistent: false,
      by: "rules",
    });
    expect(
      await consistency({ question: "Do failures attend less to the image?" }, "H1", ["attention", "image"]),
    ).toMatchObject({
      consistent: true,
    });
  });

  it("an answer that is neither YES nor NO falls back to the rules, saying so", async () => {
    const verdict = await consistency({ question: "What predicts failure?" }, "H1", [], async () => "perhaps");
    expect(verdict).toMatchObject({ consistent: true, by: "rules" });
    expect(verdict.reason).toMatch(/neither YES nor NO/);
  });
});
