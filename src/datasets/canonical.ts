/**
 * What is the one byte-exact text of this JSON value? Keys sorted (by UTF-16
 * code unit, as `Array.prototype.sort` does everywhere), no whitespace,
 * `undefined` object members dropped, strings and numbers as `JSON.stringify`
 * writes them — so Node and every browser hash the same bytes. The
 * non-finite numbers an eval log may hold (Python writes them into its JSON)
 * are written as Python writes them, `NaN`, `Infinity`, `-Infinity`, so a
 * case carrying one still has an identity.
 *
 * @example canonicalJson({ b: 1, a: [true, "x"] }) // '{"a":[true,"x"],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  const text = write(value);
  // Only on failure: walk again, tracking the path, to say where the bad value is.
  if (text === undefined) throw new Error(`canonicalJson(): ${locate(value, "$")}`);
  return text;
}

/** The canonical text, or undefined when something in the value is not JSON. */
function write(value: unknown): string | undefined {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "number":
      return Number.isFinite(value) ? JSON.stringify(value) : value > 0 ? "Infinity" : value < 0 ? "-Infinity" : "NaN";
    case "object": {
      if (Array.isArray(value)) {
        let out = "[";
        for (let i = 0; i < value.length; i++) {
          const item = value[i] === undefined ? "null" : write(value[i]);
          if (item === undefined) return undefined;
          out += i ? `,${item}` : item;
        }
        return `${out}]`;
      }
      if (ArrayBuffer.isView(value)) return undefined;
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record).sort();
      let out = "{";
      let first = true;
      for (const key of keys) {
        const v = record[key];
        if (v === undefined) continue;
        const text = write(v);
        if (text === undefined) return undefined;
        out += `${first ? "" : ","}${JSON.stringify(key)}:${text}`;
        first = false;
      }
      return `${out}}`;
    }
    default:
      return undefined;
  }
}

/** Why and where a value is not JSON, e.g. "a typed array at $.a[1] is not JSON; …". */
function locate(value: unknown, path: string): string {
  if (ArrayBuffer.isView(value)) return `a typed array at ${path} is not JSON; convert it with Array.from()`;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++)
      if (value[i] !== undefined && write(value[i]) === undefined) return locate(value[i], `${path}[${i}]`);
  } else if (value !== null && typeof value === "object") {
    for (const [key, v] of Object.entries(value))
      if (v !== undefined && write(v) === undefined) return locate(v, `${path}.${key}`);
  }
  return `a ${typeof value} at ${path} is not JSON; pass plain data`;
}
