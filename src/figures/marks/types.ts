import type { NodeBase } from "../scene.ts";

/**
 * What marks share: a channel reads one value from a datum, a scale maps a
 * value to px. The figure builds the scales once from all of its data and
 * hands the same scale to every mark that uses it; a mark never invents a
 * mapping of its own.
 */

/** Reads one value from a datum. */
export type Channel<T, V> = (d: T, i: number) => V;

/** A scale from data values to px (d3-scale's linear, log, band or point scales are all callable). */
export type PositionScale = (value: number) => number;

/** A continuous scale that can say where its ticks are (d3-scale's linear and log scales). */
export interface TickScale extends PositionScale {
  ticks(count?: number): number[];
  tickFormat(count?: number, specifier?: string): (d: number) => string;
  range(): number[];
  domain(): number[];
}

/** The styling a mark passes on to its nodes: colours from the theme, roles as classes. */
export type MarkStyle = Pick<NodeBase, "class" | "fill" | "stroke" | "strokeWidth" | "strokeDasharray" | "opacity">;

/** A style without its undefined fields (so scenes stay minimal and snapshots stable). */
export function style(s: MarkStyle | undefined): MarkStyle {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s ?? {})) if (v !== undefined) out[k] = v;
  return out as MarkStyle;
}

/** True when every value is a finite number: a datum with one that is not is dropped, never drawn at 0. */
export const finite = (...values: number[]): boolean => values.every((v) => Number.isFinite(v));
