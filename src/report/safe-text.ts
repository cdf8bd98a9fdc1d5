/** The Unicode controls that reorder text (embeddings, overrides, isolates, marks): a Trojan-Source payload. */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const HAS_BIDI = new RegExp(BIDI.source);

/**
 * What does this text look like with its bidi controls made visible? Each
 * control that can reorder what a reader sees (U+202A–U+202E, U+2066–U+2069,
 * U+200E/F, U+061C) becomes `[U+XXXX]`, so a case id or column name from an
 * imported file reads in a report exactly as it is stored. Objects and lists
 * are copied with every string (keys included) neutralised; other values are
 * kept.
 *
 * @example neutralizeBidi("abc\u202Edef") // "abc[U+202E]def"
 */
export function neutralizeBidi<T>(value: T): T {
  return walk(value) as T;
}

function text(s: string): string {
  return s.replace(BIDI, (c) => `[U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}]`);
}

function walk(value: unknown): unknown {
  if (typeof value === "string") return HAS_BIDI.test(value) ? text(value) : value;
  if (Array.isArray(value)) return value.map(walk);
  if (value !== null && typeof value === "object" && !ArrayBuffer.isView(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      Object.defineProperty(out, text(k), { value: walk(v), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return value;
}
