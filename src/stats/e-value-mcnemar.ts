import { logEValue, type EValueOptions } from "./e-value-binomial.ts";
import { count } from "./validate.ts";

/**
 * How much evidence do the discordant pairs carry that run B differs from run A?
 * The binomial-mixture e-value on the fail→pass count c among the b + c discordant
 * cases, against the null rate ½: `eValueBinomial(c, b + c, 0.5, opts)`; use
 * `alternative: "less"` for evidence that B regressed, `"greater"` that it improved.
 *
 * @example eValueMcNemar(1, 9) // 9.309: 9 of 10 discordant cases went fail→pass
 */
export function eValueMcNemar(b: number, c: number, opts?: EValueOptions): number {
  count("eValueMcNemar", "b", b);
  count("eValueMcNemar", "c", c);
  return Math.exp(logEValue("eValueMcNemar", c, b + c, 0.5, opts));
}
