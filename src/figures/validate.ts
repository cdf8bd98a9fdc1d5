/**
 * Input checks for the figures, in the statistics catalog's message form:
 * the function, the argument, what was expected and what came, e.g.
 * "gateIntervals(): tests[2].metric must be a string, got 3". Values that
 * are merely missing or not finite are not errors here: their marks are
 * dropped (and their table cells read "—").
 */

function show(x: unknown): string {
  if (typeof x === "string") return JSON.stringify(x);
  if (typeof x === "number" || typeof x === "boolean" || x === null || x === undefined) return String(x);
  return Array.isArray(x) ? "an array" : typeof x;
}

/** An array of objects (the figure's rows). */
export function rowsOf<T>(fn: string, name: string, rows: unknown): readonly T[] {
  if (!Array.isArray(rows)) throw new TypeError(`${fn}(): ${name} must be an array, got ${show(rows)}`);
  rows.forEach((row, i) => {
    if (row === null || typeof row !== "object" || Array.isArray(row))
      throw new TypeError(`${fn}(): ${name}[${i}] must be an object, got ${show(row)}`);
  });
  return rows as readonly T[];
}

/** A string field of a row. */
export function textField(fn: string, path: string, x: unknown): string {
  if (typeof x !== "string") throw new TypeError(`${fn}(): ${path} must be a string, got ${show(x)}`);
  return x;
}

/** A number field of a row: a number (possibly NaN: that mark is dropped), or undefined when optional. */
export function numberField(fn: string, path: string, x: unknown, optional = false): number {
  if (x === undefined && optional) return Number.NaN;
  if (typeof x !== "number") throw new TypeError(`${fn}(): ${path} must be a number, got ${show(x)}`);
  return x;
}

/** The figure's width in px: a finite number of at least `min`. */
export function widthOption(fn: string, width: unknown, min = 240): number {
  if (typeof width !== "number" || !Number.isFinite(width) || width < min)
    throw new RangeError(`${fn}(): width must be a number of px ≥ ${min}, got ${show(width)}`);
  return width;
}

/** A probability in (0, 1), when given. */
export function shareOption(fn: string, name: string, x: unknown): number | undefined {
  if (x === undefined) return undefined;
  if (typeof x !== "number" || !(x > 0 && x < 1))
    throw new RangeError(`${fn}(): ${name} must lie strictly between 0 and 1, got ${show(x)}`);
  return x;
}
