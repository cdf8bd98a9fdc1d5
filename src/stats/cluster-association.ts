import { tCdf } from "./distributions.ts";
import { checkSeed, drawIndex, rejectBelow, seededRng } from "./rng.ts";
import { clusterIndex, count, numbers, options, sameLength, show } from "./validate.ts";

export interface ClusterAssociationOptions {
  /** "greater": the outcome rises with the score; "less": it falls; "two-sided" (default): either. */
  alternative?: "two-sided" | "greater" | "less";
  /** Random permutations (default 1999); the p-value's resolution is 1/(permutations + 1). */
  permutations?: number;
  /** Seed of the permutations (default 0). */
  seed?: number;
}

export interface ClusterAssociation {
  /** The studentized score statistic t = Σ_g S_g / √(Σ_g S_g²), S_g = Σ_{i∈g} (x_i − x̄)(y_i − ȳ). */
  statistic: number;
  p: number;
  /** "permutation": whole clusters' scores permuted; "t": too few distinct permutations, t on G − 1 df instead. */
  method: "permutation" | "t";
  clusters: number;
  permutations: number;
}

/** Fewer distinct block permutations than this and the permutation p-value is too coarse: the t reference is used. */
const MIN_DISTINCT = 2000;

function logFactorial(k: number): number {
  let s = 0;
  for (let i = 2; i <= k; i++) s += Math.log(i);
  return s;
}

/**
 * Is a per-case score associated with a per-case outcome when cases come in correlated
 * clusters (several questions on one image)? A cluster permutation test of the score
 * statistic studentized by its cluster-robust standard error: t = Σ_g S_g / √(Σ_g S_g²) with
 * S_g = Σ_{i∈g} (x_i − x̄)(y_i − ȳ) (for ranked x and 0/1 y, a clustered Mann–Whitney/Spearman).
 * Under "score and outcome unrelated" with exchangeable clusters, whole clusters' score vectors
 * can be swapped: among clusters of equal size when the score varies within clusters, among all
 * clusters when it is constant within each. The p-value (1 + #{t* at least as extreme})/(B + 1)
 * over B random permutations is exact, whatever the within-cluster correlation, so a p-to-e
 * calibration of it has mean ≤ 1. Studentizing keeps it right asymptotically even where
 * exchangeability fails but the mean-zero null holds (Chung & Romano 2013). When the clusters
 * allow fewer than 2000 distinct permutations, t is referred to Student's t on G − 1 df instead
 * (`method: "t"`, approximate). Cost: O(B·n).
 *
 * @example clusterAssociation([1, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0], [1, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1],
 *   ["a", "a", "b", "b", "c", "c", "d", "d", "e", "e", "f", "f"], { seed: 1 })
 *   // { statistic: 2.55, p: 0.16, method: "t", clusters: 6, permutations: 0 } (6 clusters of 2: 720 permutations, too few)
 */
export function clusterAssociation(
  scores: ArrayLike<number>,
  outcome: ArrayLike<number>,
  clusters: ArrayLike<string | number>,
  opts?: ClusterAssociationOptions,
): ClusterAssociation {
  const fn = "clusterAssociation";
  const x = numbers(fn, "scores", scores, 2);
  const y = numbers(fn, "outcome", outcome, 2);
  sameLength(fn, "scores", x.length, "outcome", y.length);
  const o = options<ClusterAssociationOptions>(fn, opts);
  const alternative = o.alternative ?? "two-sided";
  if (alternative !== "two-sided" && alternative !== "greater" && alternative !== "less")
    throw new RangeError(`${fn}(): alternative must be "two-sided", "greater" or "less", got ${show(alternative)}`);
  const B = count(fn, "permutations", o.permutations ?? 1999);
  const seed = checkSeed(fn, o.seed ?? 0);
  const n = x.length;
  const { index, sizes, groups: G } = clusterIndex(fn, clusters, n);

  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += x[i]!;
    my += y[i]!;
  }
  mx /= n;
  my /= n;
  // Cases of each cluster, contiguous: start[g]…start[g + 1] in `order`.
  const start = new Int32Array(G + 1);
  for (let g = 0; g < G; g++) start[g + 1] = start[g]! + sizes[g]!;
  const fill = start.slice(0, G);
  const cx = new Float64Array(n);
  const cy = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const at = fill[index[i]!]!++;
    cx[at] = x[i]! - mx;
    cy[at] = y[i]! - my;
  }
  let constantWithin = true;
  for (let g = 0; g < G && constantWithin; g++)
    for (let k = start[g]! + 1; k < start[g + 1]!; k++)
      if (cx[k] !== cx[start[g]!]) {
        constantWithin = false;
        break;
      }
  const ySum = new Float64Array(G);
  for (let g = 0; g < G; g++) for (let k = start[g]!; k < start[g + 1]!; k++) ySum[g]! += cy[k]!;

  // The statistic for an assignment of score blocks to clusters (perm[g] = whose scores cluster g gets).
  const stat = (perm: Int32Array): number => {
    let u = 0;
    let v = 0;
    if (constantWithin) {
      // Scalar scores move between clusters of any size; their case-weighted mean moves with them.
      let shift = 0;
      for (let g = 0; g < G; g++) shift += cx[start[perm[g]!]!]! * sizes[g]!;
      shift /= n;
      for (let g = 0; g < G; g++) {
        const s = (cx[start[perm[g]!]!]! - shift) * ySum[g]!;
        u += s;
        v += s * s;
      }
    } else {
      for (let g = 0; g < G; g++) {
        const from = start[perm[g]!]!;
        let s = 0;
        for (let k = 0, to = start[g]!; k < sizes[g]!; k++, to++) s += cx[from + k]! * cy[to]!;
        u += s;
        v += s * s;
      }
    }
    return v > 0 ? u / Math.sqrt(v) : 0;
  };
  const identity = Int32Array.from({ length: G }, (_, g) => g);
  const observed = stat(identity);

  // Strata of clusters whose score blocks may be swapped.
  const strata: Int32Array[] = [];
  if (constantWithin) strata.push(identity.slice());
  else {
    const bySize = new Map<number, number[]>();
    for (let g = 0; g < G; g++) {
      const list = bySize.get(sizes[g]!);
      if (list) list.push(g);
      else bySize.set(sizes[g]!, [g]);
    }
    for (const list of bySize.values()) if (list.length > 1) strata.push(Int32Array.from(list));
  }
  let logDistinct = 0;
  for (const s of strata) logDistinct += logFactorial(s.length);

  const more = (t: number) =>
    alternative === "greater"
      ? t >= observed - 1e-12 * Math.abs(observed)
      : alternative === "less"
        ? t <= observed + 1e-12 * Math.abs(observed)
        : Math.abs(t) >= Math.abs(observed) * (1 - 1e-12);

  if (logDistinct < Math.log(MIN_DISTINCT) || B === 0) {
    const df = Math.max(1, G - 1);
    // With the G/(G − 1) factor of CR1, t_{G−1} on the same statistic.
    const t = observed * Math.sqrt((G - 1) / Math.max(1, G));
    const upper = tCdf(-t, df);
    const lower = tCdf(t, df);
    const p = alternative === "greater" ? upper : alternative === "less" ? lower : 2 * Math.min(upper, lower);
    return { statistic: observed, p: Math.min(1, p), method: "t", clusters: G, permutations: 0 };
  }

  const rng = seededRng(fn, seed);
  const perm = identity.slice();
  let hits = 0;
  for (let b = 0; b < B; b++) {
    for (const s of strata) {
      // Fisher–Yates over this stratum's clusters.
      for (let k = s.length - 1; k > 0; k--) {
        const j = drawIndex(rng, k + 1, rejectBelow(k + 1));
        const a = perm[s[k]!]!;
        perm[s[k]!] = perm[s[j]!]!;
        perm[s[j]!] = a;
      }
    }
    if (more(stat(perm))) hits++;
  }
  return { statistic: observed, p: (1 + hits) / (B + 1), method: "permutation", clusters: G, permutations: B };
}
