/**
 * Input checks shared by the statistics catalog. Every public function checks its
 * arguments with these so that bad input fails loudly, with a message naming the
 * function, the argument and what was expected, instead of leaking NaN.
 */

/** Labels that group cases into clusters (same label = same cluster). */
export type ClusterLabels = ArrayLike<string | number>;

/** A short, safe description of any value for an error message. */
export function show(x: unknown): string {
  if (typeof x === "string") return JSON.stringify(x);
  if (typeof x === "number" || typeof x === "bigint" || typeof x === "boolean") return String(x);
  if (x === null || x === undefined) return String(x);
  return Array.isArray(x) ? "an array" : typeof x;
}

/** A finite number. */
export function finite(fn: string, name: string, x: unknown): number {
  if (typeof x !== "number") throw new TypeError(`${fn}(): ${name} must be a number, got ${show(x)}`);
  if (!Number.isFinite(x)) throw new RangeError(`${fn}(): ${name} must be a finite number, got ${show(x)}`);
  return x;
}

/** A non-negative integer count (a number of cases, successes, replicates…). */
export function count(fn: string, name: string, x: unknown): number {
  finite(fn, name, x);
  const v = x as number;
  if (!Number.isInteger(v) || v < 0 || !Number.isSafeInteger(v)) {
    throw new RangeError(`${fn}(): ${name} must be a non-negative integer, got ${show(x)}`);
  }
  return v;
}

/** A positive integer. */
export function positiveInt(fn: string, name: string, x: unknown): number {
  const v = count(fn, name, x);
  if (v < 1) throw new RangeError(`${fn}(): ${name} must be at least 1, got ${v}`);
  return v;
}

/** A probability strictly between 0 and 1 (confidence levels, α, power, null rates). */
export function openUnit(fn: string, name: string, x: unknown): number {
  const v = finite(fn, name, x);
  if (!(v > 0 && v < 1)) throw new RangeError(`${fn}(): ${name} must lie strictly between 0 and 1, got ${v}`);
  return v;
}

/** A probability in [0, 1]. */
export function unit(fn: string, name: string, x: unknown): number {
  const v = finite(fn, name, x);
  if (!(v >= 0 && v <= 1)) throw new RangeError(`${fn}(): ${name} must lie in [0, 1], got ${v}`);
  return v;
}

/** A positive finite number. */
export function positive(fn: string, name: string, x: unknown): number {
  const v = finite(fn, name, x);
  if (!(v > 0)) throw new RangeError(`${fn}(): ${name} must be positive, got ${v}`);
  return v;
}

function isArrayLike(x: unknown): x is ArrayLike<unknown> {
  return (
    Array.isArray(x) ||
    (ArrayBuffer.isView(x) && !(x instanceof DataView)) ||
    (typeof x === "object" && x !== null && typeof (x as { length?: unknown }).length === "number")
  );
}

/** An array (or typed array) of finite numbers, at least `min` long; copied into a Float64Array. */
export function numbers(fn: string, name: string, x: unknown, min = 1): Float64Array {
  if (!isArrayLike(x)) throw new TypeError(`${fn}(): ${name} must be an array of numbers, got ${show(x)}`);
  const n = x.length;
  if (n < min) {
    throw new RangeError(`${fn}(): ${name} must hold at least ${min} value${min === 1 ? "" : "s"}, got ${n}`);
  }
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const v = x[i];
    if (typeof v !== "number") throw new TypeError(`${fn}(): ${name}[${i}] must be a number, got ${show(v)}`);
    if (!Number.isFinite(v)) throw new RangeError(`${fn}(): ${name}[${i}] must be finite, got ${v}`);
    out[i] = v;
  }
  return out;
}

/** Same length as the values they go with. */
export function sameLength(fn: string, nameA: string, a: number, nameB: string, b: number): void {
  if (a !== b) {
    throw new RangeError(`${fn}(): ${nameA} and ${nameB} must have the same length, got ${a} and ${b}`);
  }
}

/**
 * Cluster labels turned into dense cluster indices 0…G−1 (in order of first appearance)
 * and the size of each cluster.
 */
export function clusterIndex(
  fn: string,
  labels: unknown,
  n: number,
): { index: Int32Array; sizes: Int32Array; groups: number } {
  if (!isArrayLike(labels)) {
    throw new TypeError(`${fn}(): clusters must be an array of labels (strings or numbers), got ${show(labels)}`);
  }
  sameLength(fn, "values", n, "clusters", labels.length);
  const ids = new Map<string | number, number>();
  const index = new Int32Array(n);
  const sizes: number[] = [];
  for (let i = 0; i < n; i++) {
    const label = labels[i];
    if (typeof label !== "string" && typeof label !== "number") {
      throw new TypeError(`${fn}(): clusters[${i}] must be a string or number label, got ${show(label)}`);
    }
    if (typeof label === "number" && Number.isNaN(label)) {
      throw new RangeError(`${fn}(): clusters[${i}] is NaN; use a string or number label`);
    }
    let id = ids.get(label);
    if (id === undefined) {
      id = sizes.length;
      ids.set(label, id);
      sizes.push(0);
    }
    index[i] = id;
    sizes[id]! += 1;
  }
  return { index, sizes: Int32Array.from(sizes), groups: sizes.length };
}

/** True when some cluster holds more than one case (so cases are not independent). */
export function hasSharedCluster(sizes: Int32Array): boolean {
  for (let g = 0; g < sizes.length; g++) if (sizes[g]! > 1) return true;
  return false;
}

/** True when every value is exactly 0 or 1. */
export function isBinary(values: ArrayLike<number>): boolean {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v !== 0 && v !== 1) return false;
  }
  return true;
}

/** A plain-object options bag (or undefined). */
export function options<T extends object>(fn: string, x: unknown): Partial<T> {
  if (x === undefined) return {};
  if (typeof x !== "object" || x === null || Array.isArray(x)) {
    throw new TypeError(`${fn}(): options must be an object, got ${show(x)}`);
  }
  return x as Partial<T>;
}
