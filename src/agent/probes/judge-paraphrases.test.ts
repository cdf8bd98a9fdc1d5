import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FailureCase } from "../../core/index.ts";
import { importDataset } from "../../datasets/index.ts";
import { openAICompatibleJudge } from "../../evals/judge.ts";
import { loadModel, REPO_ROOT } from "../../models/load.node.ts";
import type { OrtModel } from "../../models/ort-model.ts";
import { FileStore } from "../../store/files.node.ts";
import { boardServer, type BoardServer } from "../agentic/board-server.node.ts";
import { EventLog } from "../events.ts";
import { growDataset } from "./grow-dataset.ts";
import { checkParaphrase, judgeParaphrases } from "./judge-paraphrases.ts";

const scene = { keep: ["red", "circle"], avoid: ["red", "blue", "green", "circle", "square"] };
const q = "<image> is there a red circle ?";

describe("checkParaphrase", () => {
  it("keeps a rewording in the question's own style, its <image> token first", () => {
    expect(checkParaphrase(q, "1. Can you see a red circle in this image?", scene)).toEqual({
      paraphrase: "<image> can you see a red circle in this image ?",
    });
    expect(checkParaphrase("Is there a dog?", '"Do you see a dog here?"', { keep: ["dog"], avoid: ["cat"] })).toEqual({
      paraphrase: "Do you see a dog here?",
    });
    expect(checkParaphrase(q, "Is there a red circle, yes or no?", scene)).toEqual({
      paraphrase: "<image> is there a red circle , yes or no ?",
    });
  });

  it("drops what would change the asked object, the question's kind or its answer, saying why", () => {
    const reason = (text: string) => {
      const r = checkParaphrase(q, text, scene);
      return "reason" in r ? r.reason : `kept: ${r.paraphrase}`;
    };
    expect(reason("Is there no red circle?")).toBe("'no' gives the answer away or negates the question");
    expect(reason("Isn't there a red circle?")).toMatch(/'n't' gives the answer away/);
    expect(reason("Is there a red circle (the answer is yes)?")).toMatch(/'yes' gives the answer away/);
    expect(reason("Is there a blue circle?")).toBe("does not name 'red' of the asked object");
    expect(reason("Is there a red circle next to a square?")).toBe("names 'square', another object or attribute");
    expect(reason("Is the circle red or blue?")).toBe("asks a choice ('or'), not a yes/no question");
    expect(reason("Describe the red circle.")).toBe("not one question ending in '?'");
    expect(reason("What colour is the red circle?")).toBe("'what' does not open a yes/no question");
    expect(reason("Is there a <b>red</b> circle?")).toMatch(/markup/);
    expect(reason(`Is there ${"a ".repeat(30)}red circle?`)).toMatch(/expected 3 to 24/);
    expect(reason("is there a red circle ?")).toBe("the question itself, not a rewording");
    expect(reason("Red circle?")).toMatch(/2 words/);
  });
});

describe("judgeParaphrases", () => {
  it("asks once per distinct question, keeps what passes, and records a failed request without stopping", async () => {
    const asked: string[] = [];
    const judge = Object.assign(
      async (prompt: string) => {
        asked.push(prompt);
        if (prompt.includes("square")) throw new Error("judge endpoint answered HTTP 503");
        return "```\nCan you see a red circle?\nIs there no red circle?\nCan you see a red circle?\n```";
      },
      { id: "scripted" },
    );
    const r = await judgeParaphrases(judge, [
      { question: q, asked: scene },
      { question: q, asked: scene },
      { question: "<image> is there a blue square ?", asked: { keep: ["blue", "square"], avoid: [] } },
    ]);
    expect(asked).toHaveLength(2);
    expect(asked[0]).toMatch(/^Rewrite this yes\/no question[^]*Question: is there a red circle \?/);
    expect(r.byQuestion.get(q)).toEqual(["<image> can you see a red circle ?"]);
    expect(r.dropped.map((d) => d.reason)).toEqual([
      "'no' gives the answer away or negates the question",
      "a repeat of another paraphrase",
    ]);
    expect(r.failed).toEqual([
      { question: "<image> is there a blue square ?", error: "judge endpoint answered HTTP 503" },
    ]);
    expect(r).toMatchObject({ judge: "scripted", requests: 2, accepted: 1 });
  });

  it("stops at once on an abort", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      judgeParaphrases(
        Object.assign(async () => "", { id: "x" }),
        [{ question: q, asked: scene }],
        {
          signal: controller.signal,
        },
      ),
    ).rejects.toThrow();
  });
});

const haveModel = existsSync(join(REPO_ROOT, "models/tiny-vlm/onnx/decoder_model_merged.onnx"));

/**
 * The probe search on tiny-vlm with the judge behind a local OpenAI-protocol server (the agentic tests'
 * `boardServer`): the judge's wordings that pass the check become the `judge-paraphrase` family, the others are
 * logged with their reasons, and every kept paraphrase's expected answer is its parent's.
 */
describe.skipIf(!haveModel)("growDataset with judge paraphrases (tiny-vlm, a local chat-completions server)", () => {
  let model: OrtModel;
  let server: BoardServer;
  let cases: FailureCase[];
  beforeAll(async () => {
    [model, server] = await Promise.all([loadModel("tiny-vlm"), boardServer()]);
    const imported = await importDataset(new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo/pope.jsonl"))), {
      name: "pope.jsonl",
    });
    cases = imported.cases.slice(0, 60);
  }, 60_000);
  afterAll(async () => {
    await model?.dispose();
    await server?.close();
  });

  it("adds the judge's checked rewordings as a family, logs the dropped ones, and keeps the parents' answers", async () => {
    const store = await FileStore.open(mkdtempSync(join(tmpdir(), "evalrx-judge-paraphrase-")));
    const log = new EventLog({ runId: "judge-paraphrase", now: () => Date.UTC(2026, 11, 2) });
    const paraphraser = openAICompatibleJudge({ baseUrl: server.baseUrl, model: "paraphraser" });
    const grown = await growDataset(
      {
        store,
        model,
        dataset: { id: "pope", cases },
        images: async (ref) => new Uint8Array(readFileSync(join(REPO_ROOT, "public/demo", ref))),
        budget: 150,
        seed: 1,
        paraphraser,
      },
      log,
    );
    expect(grown.id).toBe("pope+probes-s1-b150-judge");
    const event = log.all("probes.searched")[0]!.payload as Record<string, never>;
    const judged = event["judgeParaphrases"] as unknown as {
      judge: string;
      requests: number;
      accepted: number;
      dropped: number;
      droppedWordings: { question: string; text: string; reason: string }[];
    };
    // One request per distinct seed question; two of the server's five wordings pass, three are dropped with why.
    const rewrites = server.requests.filter((r) => r.messages[0]!.content.startsWith("Rewrite this yes/no question"));
    expect(judged.requests).toBe(rewrites.length);
    expect(judged.requests).toBeGreaterThan(5);
    expect(judged.accepted).toBe(2 * judged.requests);
    expect(judged.dropped).toBe(3 * judged.requests);
    expect(new Set(judged.droppedWordings.map((d) => d.reason.replace(/'[^']*'/g, "…")))).toEqual(
      new Set(["… gives the answer away or negates the question", "does not name … of the asked object"]),
    );
    const family = (event["families"] as unknown as { family: string; calls: number }[]).find(
      (f) => f.family === "judge-paraphrase",
    );
    expect(family?.calls).toBeGreaterThan(0);
    expect(event["note"]).toMatch(/a judge's paraphrase .* keeps the seed's image, so its answer is the seed's/);
    const byId = new Map(cases.map((c) => [c.id, c]));
    const kept = grown.cases.filter((c) => c.tags.includes("probe:judge-paraphrase"));
    for (const c of kept) {
      const p = c.meta.provenance as { parent: string; edit: string };
      const parent = byId.get(p.parent)!;
      expect(c.expected, c.id).toBe(parent.expected);
      expect(p.edit).toBe(`judge paraphrase '${c.input.prompt}'`);
      expect(c.input.prompt).toMatch(/^<image> (can you see|does the picture contain) a \w+ \w+ (in this image )?\?$/);
      expect(c.cluster).toBe(parent.cluster ?? `id:${parent.id}`);
    }
    // The same wording of the same seed is one case: neither asked twice nor kept twice.
    const pairs = kept.map((c) => `${(c.meta.provenance as { parent: string }).parent} ${c.input.prompt}`);
    expect(new Set(pairs).size).toBe(pairs.length);
  }, 120_000);
});
