import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { boardServer, type BoardServer } from "./board-server.node.ts";
import { agenticJudgeFor, checkEndpointUrl, checkJudgeChoice, withoutKey } from "./judge-choice.ts";

const noModel = () => Promise.reject(new Error("no model here"));

describe("the page's judge choice", () => {
  let server: BoardServer;
  beforeAll(async () => {
    server = await boardServer();
  });
  afterAll(() => server.close());

  it("accepts loopback endpoints and says what a remote one needs", () => {
    expect(checkEndpointUrl("http://localhost:8000/v1/")).toBe("http://localhost:8000/v1");
    expect(() => checkEndpointUrl("https://api.example.com/v1")).toThrow(
      /connects only to endpoints on this machine .* got api\.example\.com; for a remote endpoint run a loopback proxy/,
    );
    expect(() => checkEndpointUrl("ftp://127.0.0.1/")).toThrow("judge URL: expected an http(s) URL, got ftp:");
  });

  it("names the field that is wrong, and never keeps the key", () => {
    expect(() => checkJudgeChoice({ kind: "endpoint", url: "http://127.0.0.1:1/v1", model: " " })).toThrow(
      "plan.judge.model: expected the model name the endpoint serves",
    );
    expect(() => checkJudgeChoice({ kind: "oracle" })).toThrow(
      'plan.judge.kind: expected "rules", "endpoint" or "model", got "oracle"',
    );
    const chosen = checkJudgeChoice({ kind: "endpoint", url: "http://127.0.0.1:1/v1", model: "m", apiKey: "sk-1" });
    expect(JSON.stringify(withoutKey(chosen))).not.toContain("sk-1");
  });

  it("asks the endpoint for one tool call a turn, with the key as a bearer token", async () => {
    const chosen = await agenticJudgeFor(
      { kind: "endpoint", url: server.baseUrl, model: "board-reader", apiKey: "sk-1" },
      { loadModel: noModel },
    );
    const board = {
      question: "q",
      turn: 1,
      turnsLeft: 5,
      modelCalls: { used: 0, budget: null },
      available: ["run_probe", "stop"],
      calls: {},
      analyses: [],
      refused: [],
    };
    const reply = await chosen.agentic.next(`Evidence board (JSON):\n${JSON.stringify(board)}`, board as never);
    expect(reply).toContain('"tool":"run_probe"');
    expect(server.authorizations.at(-1)).toBe("Bearer sk-1");
    await expect(agenticJudgeFor({ kind: "model", model: "tiny-lm" }, { loadModel: noModel })).rejects.toThrow(
      "no model here",
    );
  });
});
