import { numbers } from "./validate.ts";

/**
 * How precisely is the mean of these scores known, treating cases as independent?
 * Returns the mean and its standard error, sample sd / √n (n − 1 in the sd);
 * `se` is null for a single value, where no spread can be estimated.
 *
 * @example meanSE([1, 2, 3, 4]) // { mean: 2.5, se: 0.6455 }
 */
export function meanSE(values: ArrayLike<number>): { mean: number; se: number | null } {
  const x = numbers("meanSE", "values", values, 1);
  const n = x.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += x[i]!;
  const mean = sum / n;
  if (n < 2) return { mean, se: null };
  let ss = 0;
  for (let i = 0; i < n; i++) {
    const d = x[i]! - mean;
    ss += d * d;
  }
  return { mean, se: Math.sqrt(ss / (n - 1) / n) };
}
