import { format } from "node:util";

/** Controls a terminal acts on (C0 but tab and newline, DEL, C1) and the bidi controls that reorder a line. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * What is safe to print of this text? Every control character a terminal
 * would act on (an ANSI escape that recolours, moves the cursor or retitles
 * the window; a carriage return that overwrites the line) and every bidi
 * control is written as a visible escape (`\x1b`, `\u202e`), so a column name
 * or case id from an imported file is shown, never executed. Tabs and newlines stay.
 *
 * @example terminalSafe("col\u001b[31mred") // "col\\x1b[31mred"
 */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/**
 * Makes `console.log`, `console.error`, `console.warn` and `console.info`
 * print through {@link terminalSafe} until the returned function is called.
 * JSON output is unchanged (JSON.stringify already escapes controls).
 *
 * @example const restore = safeConsole(); try { await command.run(args) } finally { restore() }
 */
export function safeConsole(): () => void {
  const saved = { log: console.log, error: console.error, warn: console.warn, info: console.info };
  for (const name of ["log", "error", "warn", "info"] as const) {
    const original = saved[name];
    console[name] = (...args: unknown[]) => original.call(console, terminalSafe(format(...args)));
  }
  return () => Object.assign(console, saved);
}
