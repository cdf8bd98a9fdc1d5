import { expect, it } from "vitest";
import { mechanismOf } from "./mechanisms.ts";

it("names mechanisms by what the signal measures and which way it points", () => {
  expect(mechanismOf("attention.imageShare.pooled", -1).mechanism).toMatch(/weak visual grounding/);
  // Probability of the answer: lower in failures means less sure; entropy: higher in failures means less sure.
  expect(mechanismOf("logprob.answer", -1).mechanism).toMatch(/uncertain decoding/);
  expect(mechanismOf("logitLens.answerProb.S2", -1).mechanism).toMatch(/uncertain decoding/);
  expect(mechanismOf("tokenEntropy.answer", 1).mechanism).toMatch(/uncertain decoding/);
  expect(mechanismOf("tokenEntropy.answer", -1).mechanism).toMatch(/over-confident/);
  expect(mechanismOf("logitLens.top1Layer", 1).mechanism).toMatch(/late answer formation/);
  expect(mechanismOf("meta.co_occurrence_partner_absent", 1).mechanism).toMatch(/co-occurrence prior/);
  expect(mechanismOf("expected", 1).mechanism).toMatch(/answer bias/);
  const unknown = mechanismOf("retrieval_hits", -1);
  expect(unknown).toMatchObject({ known: false });
  expect(unknown.mechanism).toMatch(/covariate: cases with less 'retrieval_hits' fail more often/);
  expect(mechanismOf("sink.mass.L1", 1).tags).toEqual(expect.arrayContaining(["attention", "sink"]));
});
