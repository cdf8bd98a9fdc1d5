import { count, openUnit } from "./validate.ts";
import { wilson } from "./wilson.ts";

/**
 * By how much did the pass rate change from run A to run B on the same cases?
 * Newcombe's (1998) method 10 interval for B's rate minus A's rate on paired 0/1
 * outcomes: Wilson intervals for each rate combined through the phi correlation of
 * the 2×2 table, with a positive correlation first shrunk by n/2 (Newcombe's
 * continuity correction; a zero margin gives phi = 0).
 *
 * Arguments are the cells of the paired table: `both` passed in A and B, `wentBad`
 * passed in A only, `wentGood` passed in B only, `neither` failed in both.
 *
 * @example newcombePaired(59, 6, 16, 80) // ≈ [0.0046, 0.1186] (Cavo et al. 2012, as in R contingencytables)
 * @example newcombePaired(3, 0, 0, 0)  // ≈ [−0.5615, 0.5615]
 */
export function newcombePaired(
  both: number,
  wentBad: number,
  wentGood: number,
  neither: number,
  confidence = 0.95,
): [lo: number, hi: number] {
  const fn = "newcombePaired";
  const a = count(fn, "both", both);
  const b = count(fn, "wentBad", wentBad);
  const c = count(fn, "wentGood", wentGood);
  const d = count(fn, "neither", neither);
  openUnit(fn, "confidence", confidence);
  const n = a + b + c + d;
  if (n === 0) throw new RangeError("newcombePaired(): the table is empty; it needs at least one paired case");
  const pA = (a + b) / n;
  const pB = (a + c) / n;
  const [lA, uA] = wilson(a + b, n, confidence);
  const [lB, uB] = wilson(a + c, n, confidence);

  const margins = (a + b) * (c + d) * (a + c) * (b + d);
  let phi = 0;
  if (margins > 0) {
    let num = a * d - b * c;
    if (num > n / 2) num -= n / 2;
    else if (num >= 0) num = 0;
    phi = num / Math.sqrt(margins);
  }
  const diff = pB - pA;
  const dl = pB - lB;
  const du = uB - pB;
  const al = pA - lA;
  const au = uA - pA;
  const delta = Math.sqrt(Math.max(0, dl * dl - 2 * phi * dl * au + au * au));
  const eps = Math.sqrt(Math.max(0, du * du - 2 * phi * du * al + al * al));
  return [Math.max(-1, diff - delta), Math.min(1, diff + eps)];
}
