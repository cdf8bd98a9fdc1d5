/**
 * What a weight change must not break, measured on the validation's own cases:
 * accuracy on the slices a yes/no repair is most likely to buy its fixes with —
 * the present objects (expected "yes": a repair that only says "no" more often
 * loses them) and POPE's random split (the easy questions) — compared with the
 * unmodified baseline on the same cases.
 */
import type { FailureCase } from "../../core/index.ts";

/** One guarded slice: baseline and candidate accuracy on it, and the drop (baseline − candidate). */
export interface GuardSlice {
  readonly slice: string;
  readonly n: number;
  readonly baseline: number;
  readonly candidate: number;
  readonly drop: number;
  readonly holds: boolean;
}

export interface NoFreeLunch {
  /** The largest drop allowed on any slice (accuracy points, 0–1). */
  readonly margin: number;
  readonly slices: readonly GuardSlice[];
  readonly holds: boolean;
  readonly note: string;
}

/** The default margin: 2 accuracy points on each slice. */
export const NO_FREE_LUNCH_MARGIN = 0.02;

/**
 * Does the candidate keep its accuracy on present objects (expected "yes") and on the random split, within
 * `margin` of the baseline on the same cases? A slice with no case is left out and named in the note.
 *
 * @example
 * noFreeLunch(cases, [true, true, false], [true, false, true]).slices[0] // { slice: "present objects", n: 2, baseline: 1, candidate: 0.5, drop: 0.5, holds: false }
 */
export function noFreeLunch(
  cases: readonly FailureCase[],
  baseline: readonly boolean[],
  candidate: readonly boolean[],
  margin = NO_FREE_LUNCH_MARGIN,
): NoFreeLunch {
  if (baseline.length !== cases.length || candidate.length !== cases.length)
    throw new Error(
      `noFreeLunch(): ${cases.length} cases, ${baseline.length} baseline and ${candidate.length} candidate results`,
    );
  if (!(margin >= 0 && margin < 1)) throw new RangeError(`noFreeLunch(): margin must lie in [0, 1), got ${margin}`);
  const slices: GuardSlice[] = [];
  const empty: string[] = [];
  const guard = (slice: string, keep: (c: FailureCase) => boolean) => {
    const idx = cases.flatMap((c, i) => (keep(c) ? [i] : []));
    if (!idx.length) return empty.push(slice);
    const acc = (r: readonly boolean[]) => idx.filter((i) => r[i]).length / idx.length;
    const b = acc(baseline);
    const c = acc(candidate);
    slices.push({ slice, n: idx.length, baseline: b, candidate: c, drop: b - c, holds: b - c <= margin + 1e-12 });
  };
  guard(
    "present objects",
    (c) =>
      String(c.expected ?? "")
        .trim()
        .toLowerCase() === "yes",
  );
  guard("random split", (c) => c.split === "random");
  const holds = slices.every((s) => s.holds);
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const note =
    slices
      .map(
        (s) =>
          `${s.slice}: ${pct(s.baseline)} → ${pct(s.candidate)} (n = ${s.n}${s.holds ? "" : `, drops ${pct(s.drop)}, over the ${pct(margin)} margin`})`,
      )
      .join("; ") + (empty.length ? `; not checked (no case): ${empty.join(", ")}` : "");
  return { margin, slices, holds, note };
}
