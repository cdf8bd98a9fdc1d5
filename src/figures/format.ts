import { format } from "d3-format";

/**
 * Number formats shared by the page, the HTML report and the CLI's lines, so
 * one value reads the same everywhere. Every formatter writes a non-finite
 * value as "—" (never "NaN" or "0"), so a bug shows as a gap, not a number.
 */

// `scale`: what the formatter multiplies by (points are shares × 100), so a value finite only before it is a dash too.
const guard =
  (f: (x: number) => string, scale = 1) =>
  (x: number | null | undefined): string =>
    x === null || x === undefined || !Number.isFinite(x * scale) ? "—" : f(x);

/**
 * A share as a percentage with one decimal.
 *
 * @example percent(0.8754) // "87.5%"
 */
export const percent = guard(format(".1%"), 100);

/**
 * A difference of shares in percentage points, signed.
 *
 * @example points(-0.0312) // "−3.1 pts"
 */
export const points = guard((x) => `${format("+.1f")(x * 100)} pts`, 100);

/**
 * A p-value: three decimals, or "< 0.001".
 *
 * @example pValue(0.00004) // "< 0.001"
 */
export const pValue = guard((p) => (p < 0.001 ? "< 0.001" : format(".3f")(p)));

/**
 * A plain number with up to `digits` significant digits, without trailing zeros.
 *
 * @example decimal(0.123456) // "0.123"
 */
export const decimal = guard(format(".3~g"));

/**
 * A count with thousands separators.
 *
 * @example count(100000) // "100,000"
 */
export const count = guard(format(",d"));

/**
 * An e-value: large ones in scientific notation.
 *
 * @example eValue(1234.5) // "1.2e+3"
 */
export const eValue = guard((e) => (e >= 1000 ? format(".1e")(e) : format(".3~g")(e)));

/**
 * An interval of shares.
 *
 * @example shareInterval(0.81, 0.9) // "[81.0%, 90.0%]"
 */
export const shareInterval = (lo: number, hi: number): string => `[${percent(lo)}, ${percent(hi)}]`;

/**
 * A byte size in KB / MB / GB (binary units).
 *
 * @example bytes(3_500_000) // "3.3 MB"
 */
export const bytes = guard((n) => {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  for (; n >= 1024 && i < units.length - 1; i++) n /= 1024;
  return `${i === 0 ? n : n.toFixed(1)} ${units[i]}`;
});

/**
 * A duration in ms, s, min or h.
 *
 * @example duration(95_000) // "1 min 35 s"
 */
export const duration = guard((ms) => {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s - 60 * m)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
});

/**
 * A difference of shares as an axis tick in points: signed, no unit, no
 * trailing zeros, and zero unsigned (the axis title says "points").
 *
 * @example pointsTick(-0.025) // "−2.5"
 */
export const pointsTick = guard((x) => {
  const v = Math.round(x * 1e6) / 1e4; // to points, without floating dust (0.07 * 100 = 7.000000000000001)
  return v === 0 ? "0" : format("+.2~f")(v);
}, 1e6);

/**
 * A size of a difference in points, unsigned (a tolerance, a detectable drop).
 *
 * @example pointSize(0.03) // "3.0 pts"
 */
export const pointSize = guard((x) => `${format(".1f")(Math.abs(x) * 100)} pts`, 100);
