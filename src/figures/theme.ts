import { interpolateCividis, interpolatePuOr } from "d3-scale-chromatic";

/**
 * The figures' colours and type, the same values as the page's design tokens
 * (`src/ui/styles/tokens.css`; a test keeps the two equal). The palette is
 * Okabe–Ito, safe for the common colour-vision deficiencies, and a colour
 * that carries meaning always comes with a word or a shape (a verdict is
 * written out; the zero line is labelled), never alone.
 */
export const COLORS = {
  text: "#1d1d1f",
  muted: "#5a5a60",
  faint: "#8a8a90",
  bg: "#ffffff",
  panel: "#f6f6f8",
  line: "#dcdce0",
  accent: "#0072b2",
  /** Passed / better: Okabe–Ito blue. */
  pass: "#0072b2",
  /** Failed / worse: Okabe–Ito vermillion. */
  fail: "#d55e00",
  /** Inconclusive / caution: dark yellow, readable on white. */
  warn: "#8a6d00",
  neutral: "#6b6b70",
  orange: "#e69f00",
  sky: "#56b4e9",
  green: "#009e73",
  purple: "#cc79a7",
} as const;

/** Categorical colours in order (Okabe–Ito without the light yellow, which is unreadable on white). */
export const CATEGORICAL: readonly string[] = [
  COLORS.accent,
  COLORS.orange,
  COLORS.green,
  COLORS.purple,
  COLORS.sky,
  COLORS.fail,
  COLORS.neutral,
];

/** The colour of a verdict (always drawn next to the verdict's word). */
export const VERDICT_COLORS = {
  pass: COLORS.pass,
  fail: COLORS.fail,
  inconclusive: COLORS.warn,
  error: COLORS.fail,
} as const;

/** Type: one family, three sizes (px). */
export const TYPE = {
  font: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  /** Tick labels, notes. */
  small: 11,
  /** Row labels, legends. */
  label: 12,
  /** Axis titles. */
  title: 12,
} as const;

/**
 * A colour for t ∈ [0, 1] on a sequential ramp (cividis: monotone in
 * lightness, readable in every common colour-vision deficiency); a
 * non-finite t gives the panel colour, never the ramp's start.
 *
 * @example sequential(0) // "rgb(0, 32, 81)"
 */
export function sequential(t: number): string {
  return Number.isFinite(t) ? interpolateCividis(Math.min(1, Math.max(0, t))) : COLORS.panel;
}

/**
 * A colour for t ∈ [−1, 1] on a diverging ramp (purple–orange: distinguishable
 * without red–green), near-white at 0.
 *
 * @example diverging(0) // "rgb(243, 238, 234)"
 */
export function diverging(t: number): string {
  return Number.isFinite(t) ? interpolatePuOr((1 - Math.min(1, Math.max(-1, t))) / 2) : COLORS.panel;
}
