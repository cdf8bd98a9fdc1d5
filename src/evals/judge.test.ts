import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runChecks } from "./evaluator.ts";
import { judge } from "./evaluators/judge.ts";
import { ctx } from "./evaluators/testing.ts";
import { memoryJudgeCache, modelJudge, openAICompatibleJudge, parseVerdict, type Judge } from "./judge.ts";
import { ScriptedModel } from "./testing.ts";

describe("parseVerdict", () => {
  it("reads PASS/FAIL at the start of the first line, the rest as reason", () => {
    expect(parseVerdict("FAIL: names a blue square")).toEqual({ passed: false, reason: "names a blue square" });
    expect(parseVerdict("\n**PASS**\nthe answer is right")).toEqual({ passed: true, reason: "the answer is right" });
    expect(parseVerdict("Verdict: pass - fine")).toEqual({ passed: true, reason: "fine" });
    expect(parseVerdict("I think this is a FAIL.")).toEqual({ passed: false, reason: "I think this is a FAIL." });
  });
  it("refuses an answer without a verdict, or with both", () => {
    expect(() => parseVerdict("the answer looks okay")).toThrow(/expected PASS or FAIL/);
    expect(() => parseVerdict("could be PASS or FAIL")).toThrow(/expected PASS or FAIL/);
    expect(() => parseVerdict("passable")).toThrow(/expected PASS or FAIL/);
  });
});

describe("judge evaluator", () => {
  it("caches verdicts by judge version and what it was shown", async () => {
    const prompts: string[] = [];
    const fake: Judge = Object.assign(async (p: string) => (prompts.push(p), "PASS looks right"), { id: "fake" });
    const cache = memoryJudgeCache();
    const j = judge(fake, "Names only real objects.", { cache });
    expect(await j.check(ctx("a red circle", "red circle"))).toEqual({
      passed: true,
      reason: "looks right",
      data: { cached: false },
    });
    expect(await j.check(ctx("a red circle", "red circle"))).toMatchObject({ passed: true, data: { cached: true } });
    expect(prompts).toHaveLength(1);
    expect(prompts[0]).toContain("Rubric: Names only real objects.");
    expect(prompts[0]).toContain("Model's answer: a red circle");
    // a different rubric is a different version, hence a cache miss
    const other = judge(fake, "Another rubric.", { cache });
    expect(other.version).not.toBe(j.version);
    await other.check(ctx("a red circle", "red circle"));
    expect(prompts).toHaveLength(2);
    expect(cache.size).toBe(2);
  });
  it("a local model can judge: greedy, its key in the judge's id and version", async () => {
    const local = new ScriptedModel(
      (p) => (p.includes("blue square") ? "FAIL blue square is absent" : "PASS"),
      0,
      "tiny-lm",
    );
    const j = judge(modelJudge(local), "Names only real objects.");
    expect(j.parameters).toMatchObject({ judge: "model:tiny-lm" });
    expect(await j.check(ctx("a blue square", "red circle"))).toMatchObject({
      passed: false,
      reason: "blue square is absent",
    });
    expect(local.calls[0]!.prompt).toContain("Reply with PASS or FAIL");
  });

  it("an unparsable answer errors the check, the others still run", async () => {
    const vague: Judge = async () => "hmm, hard to say";
    const [outcome] = await runChecks([judge(vague, "r")], ctx("x", "y"));
    expect(outcome).toMatchObject({ name: "judge", errored: true, passed: false });
    expect(outcome!.error).toMatch(/expected PASS or FAIL/);
  });
});

describe("openAICompatibleJudge against a local endpoint", () => {
  let server: Server;
  let baseUrl: string;
  const seen: { url?: string; auth?: string; body: Record<string, unknown> }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        const parsed = JSON.parse(body) as { model: string; messages: { content: string }[] };
        seen.push({ url: req.url, auth: req.headers.authorization, body: parsed });
        if (parsed.model === "broken") {
          res.writeHead(500).end("overloaded");
          return;
        }
        const text = parsed.messages.at(-1)!.content;
        const content =
          parsed.model === "vague" ? "maybe" : text.includes("blue square") ? "FAIL: invents a blue square" : "PASS";
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ choices: [{ message: { role: "assistant", content } }] }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("posts a chat completion and grades by the reply", async () => {
    const j = judge(openAICompatibleJudge({ baseUrl, model: "grader", apiKey: "k" }), "Only real objects.");
    const [good, bad] = await Promise.all([
      runChecks([j], ctx("a red circle", "red circle")),
      runChecks([j], ctx("a red circle and a blue square", "red circle")),
    ]);
    expect(good[0]).toMatchObject({ passed: true, errored: false });
    expect(bad[0]).toMatchObject({ passed: false, errored: false, reason: "invents a blue square" });
    expect(seen[0]).toMatchObject({
      url: "/v1/chat/completions",
      auth: "Bearer k",
      body: { model: "grader", temperature: 0 },
    });
  });
  it("an HTTP error or an unparsable reply is an errored check", async () => {
    const [e1] = await runChecks([judge(openAICompatibleJudge({ baseUrl, model: "broken" }), "r")], ctx("x", "y"));
    expect(e1).toMatchObject({ errored: true });
    expect(e1!.error).toMatch(/HTTP 500: overloaded/);
    const [e2] = await runChecks([judge(openAICompatibleJudge({ baseUrl, model: "vague" }), "r")], ctx("x", "y"));
    expect(e2).toMatchObject({ errored: true });
    expect(e2!.error).toMatch(/"maybe"; expected PASS or FAIL/);
  });
});
