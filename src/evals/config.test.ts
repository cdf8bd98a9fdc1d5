import { describe, expect, it } from "vitest";
import { buildEvaluators, parseEvalConfig } from "./config.ts";
import { ctx } from "./evaluators/testing.ts";
import { regex } from "./evaluators/regex.ts";
import type { Judge } from "./judge.ts";

describe("eval config", () => {
  const base = { dataset: "pope.jsonl", model: "tiny-vlm", evaluators: ["yesNo"] };
  it("accepts a full config", () => {
    const c = parseEvalConfig({
      ...base,
      name: "pope",
      select: { sample: 50 },
      repeats: 3,
      cluster: true,
      generation: { temperature: 0.7, maxNewTokens: 3, seed: 1 },
      gate: { threshold: 0.8 },
    });
    expect(c.repeats).toBe(3);
  });
  it("names the first wrong field and what was expected", () => {
    expect(() => parseEvalConfig({ ...base, repeats: 0 })).toThrow(
      "eval config: repeats is 0; expected a positive integer up to 1000",
    );
    expect(() => parseEvalConfig({ ...base, evaluators: ["nope"] })).toThrow(
      /evaluators\[0\] is "nope"; expected a type among exact, contains/,
    );
    expect(() => parseEvalConfig({ ...base, generation: { temp: 1 } })).toThrow(
      "eval config: generation.temp is not a generation setting (generation settings are temperature, maxNewTokens, topK, seed, stop)",
    );
    expect(() => parseEvalConfig({ ...base, extra: 1 })).toThrow(/extra is not a config key \(config keys are name,/);
    expect(() => parseEvalConfig({ model: "m", evaluators: ["yesNo"] })).toThrow(/dataset is missing/);
  });
  it("refuses unknown keys at every level, suggesting the nearest known one", () => {
    const cases: [Record<string, unknown>, string | RegExp][] = [
      [{ ...base, repeat: 3 }, /^eval config: repeat is not a config key; did you mean 'repeats'\? \(config keys are /],
      [{ ...base, select: { sampel: 5 } }, /select\.sampel is not a selection field; did you mean 'sample'\?/],
      [{ ...base, gate: { tolerence: 0.03 } }, /gate\.tolerence is not a gate field; did you mean 'tolerance'\?/],
      [{ ...base, generation: { temprature: 0.7 } }, /did you mean 'temperature'\?/],
      [{ ...base, evaluators: ["yesno"] }, /did you mean 'yesNo'\?/],
      [
        { ...base, evaluators: [{ type: "regex", patern: "^yes" }] },
        "eval config: evaluators[0].patern is not a parameter of regex; did you mean 'pattern'? (regex takes type, name, pattern, flags, negate)",
      ],
    ];
    for (const [config, message] of cases)
      expect(() => parseEvalConfig(config), JSON.stringify(config)).toThrow(message);
  });

  it("checks every type and bound, and never answers with a JavaScript internal", () => {
    const cases: [Record<string, unknown>, string | RegExp][] = [
      [{ ...base, repeats: 1e9 }, "eval config: repeats is 1000000000; expected a positive integer up to 1000"],
      [{ ...base, concurrency: 1.5 }, /concurrency is 1\.5; expected a positive integer up to 256/],
      [
        { ...base, generation: { stop: "x" } },
        /generation\.stop is "x"; expected a list of up to 64 non-empty strings/,
      ],
      [{ ...base, generation: { seed: 1.5 } }, /generation\.seed is 1\.5; expected an integer/],
      [{ ...base, select: { tags: "color" } }, /select\.tags is "color"; expected a list of non-empty strings/],
      [{ ...base, select: { ids: [1, 2] } }, /select\.ids is \[1,2\]; expected a list of non-empty strings/],
      [{ ...base, select: { sample: -1 } }, /select\.sample is -1; expected a positive integer/],
      [
        { ...base, gate: { tolerance: "x" } },
        /gate\.tolerance is "x"; expected a number in \(0, 1\) or \{ "<metric>": number \}/,
      ],
      [{ ...base, gate: { tolerance: [0.1] } }, /gate\.tolerance is \[0\.1\]; expected a number in \(0, 1\) or/],
      [{ ...base, gate: { tolerance: { pass: 2 } } }, /gate\.tolerance\.pass is 2; expected a number in \(0, 1\)/],
      [{ ...base, gate: { threshold: 80 } }, /gate\.threshold is 80; expected a number in \[0, 1\], e\.g\. 0\.8/],
      [{ ...base, gate: { bootstrap: 5 } }, /gate\.bootstrap is 5; expected an integer from 100/],
      [{ ...base, gate: { strict: "yes" } }, /gate\.strict is "yes"; expected true or false/],
      [{ ...base, gate: { metrics: "pass" } }, /gate\.metrics is "pass"; expected a non-empty list/],
      [
        { ...base, cluster: "scene" },
        /cluster is "scene"; expected a case field \("cluster", "split", "id", "meta\.<key>"\)/,
      ],
      [
        { ...base, evaluators: [{ type: "yesNo", name: 3 }] },
        /evaluators\[0\]\.name is 3; expected a non-empty string/,
      ],
    ];
    for (const [config, message] of cases) {
      let error: unknown;
      try {
        parseEvalConfig(config);
      } catch (e) {
        error = e;
      }
      expect(error, JSON.stringify(config)).toBeInstanceOf(Error);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toMatch(/is not a function|undefined|\[object Object\]/);
    }
  });

  it("builds evaluators from JSON, with the same versions as the factories", async () => {
    const judged: string[] = [];
    const fake: Judge = async (p) => (judged.push(p), "PASS ok");
    const evs = buildEvaluators(
      ["yesNo", { type: "regex", pattern: "^(yes|no)", flags: "i", name: "format" }, { type: "judge", rubric: "r" }],
      () => fake,
    );
    expect(evs.map((e) => e.name)).toEqual(["yesNo", "format", "judge"]);
    expect(evs[1]!.version).toBe(regex("^(yes|no)", "i", { name: "format" }).version);
    expect(await evs[2]!.check(ctx("yes", "yes"))).toMatchObject({ passed: true, reason: "ok" });
    expect(() => buildEvaluators([{ type: "regex" }])).toThrow(/regex\.pattern is missing; expected a string/);
    expect(() => buildEvaluators([{ type: "fuzzy", threshold: "0.9" }])).toThrow(
      'eval config: fuzzy.threshold is "0.9"; expected a number',
    );
    expect(() => buildEvaluators([{ type: "exact", normalize: "yes" }])).toThrow(
      /exact\.normalize is "yes"; expected true or false/,
    );
    expect(() => buildEvaluators([{ type: "judge", baseUrl: "http://localhost:8000/v1", rubric: "r" }])).toThrow(
      /judge\.model is missing; expected a string/,
    );
  });
});
