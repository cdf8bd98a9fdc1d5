/**
 * What value does this JSON text hold, read as the tools that write eval logs
 * write it? Python's `json` module and pydantic write the non-finite floats
 * as the bare tokens `NaN`, `Infinity` and `-Infinity`, which `JSON.parse`
 * refuses: a single one would cost a whole row, or a whole Inspect log. Here
 * they parse as the numbers they mean. Anything else that is not JSON throws
 * the `SyntaxError` that `JSON.parse` gave for the text as written.
 *
 * The common case costs one `JSON.parse`; only text it refuses and that holds
 * one of those tokens is scanned (strings skipped) and parsed again.
 *
 * @example parseJson('{"acc": NaN, "ppl": Infinity}') // { acc: NaN, ppl: Infinity }
 */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    if (!/NaN|Infinity/.test(text)) throw error;
    const rewritten = rewriteNonFinite(text);
    if (rewritten === undefined) throw error;
    try {
      return rewritten.nan === undefined
        ? JSON.parse(rewritten.text)
        : JSON.parse(rewritten.text, (_key, value: unknown) => (value === rewritten.nan ? NaN : value));
    } catch {
      throw error;
    }
  }
}

/**
 * The text with every bare `Infinity` / `-Infinity` outside strings written as
 * `1e999` / `-1e999` (which `JSON.parse` reads as ±Infinity) and every bare
 * `NaN` as a string marker that no string of the text can decode to; or
 * undefined when there is no such token outside strings.
 */
function rewriteNonFinite(text: string): { text: string; nan?: string } | undefined {
  // A NUL can only be written in JSON as the escape \u0000, whose spelling is unique (no hex letters):
  // when the text never spells it before "NaN", no decoded string can equal the marker.
  let nan = "\u0000NaN";
  for (let k = 0; text.includes(JSON.stringify(nan).slice(1, -1)); k++) nan = `\u0000NaN${k}`;
  const parts: string[] = [];
  let from = 0;
  let sawNaN = false;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      // Skip the string, escapes included.
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 92 /* \ */) i += 2;
        else if (d === 34) break;
        else i++;
      }
      i++;
      continue;
    }
    if (c === 78 /* N */ && text.startsWith("NaN", i)) {
      parts.push(text.slice(from, i), JSON.stringify(nan));
      sawNaN = true;
      i += 3;
      from = i;
      continue;
    }
    if (c === 73 /* I */ && text.startsWith("Infinity", i)) {
      parts.push(text.slice(from, i), "1e999");
      i += 8;
      from = i;
      continue;
    }
    i++;
  }
  if (from === 0) return undefined;
  parts.push(text.slice(from));
  return { text: parts.join(""), ...(sawNaN && { nan }) };
}
