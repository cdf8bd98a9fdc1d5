/**
 * What is the one byte-exact text of this JSON value? Keys sorted (by UTF-16
 * code unit, as `Array.prototype.sort` does everywhere), no whitespace,
 * `undefined` object members dropped, strings and numbers as `JSON.stringify`
 * writes them — so Node and every browser hash the same bytes.
 *
 * @example canonicalJson({ b: 1, a: [true, "x"] }) // '{"a":[true,"x"],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  return write(value, "$");
}

function write(value: unknown, path: string): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
    case "boolean":
      return JSON.stringify(value);
    case "number":
      if (!Number.isFinite(value))
        throw new Error(`canonicalJson(): ${value} at ${path} is not a JSON number; use null or a string instead`);
      return JSON.stringify(value);
    case "object": {
      if (Array.isArray(value))
        return `[${value.map((item, i) => (item === undefined ? "null" : write(item, `${path}[${i}]`))).join(",")}]`;
      if (ArrayBuffer.isView(value))
        throw new Error(`canonicalJson(): a typed array at ${path} is not JSON; convert it with Array.from()`);
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record)
        .filter((key) => record[key] !== undefined)
        .sort();
      return `{${keys.map((key) => `${JSON.stringify(key)}:${write(record[key], `${path}.${key}`)}`).join(",")}}`;
    }
    default:
      throw new Error(`canonicalJson(): a ${typeof value} at ${path} is not JSON; pass plain data`);
  }
}
