import { fitText, textWidth } from "./text-width.ts";

/**
 * Where may a long label break? After a space, and after the punctuation
 * that joins the parts of signal names and ids (`.`, `=`, `_`, `/`, `-`,
 * `:`, `,`), so `logitLens.answerProb.S2` wraps as `logitLens.` /
 * `answerProb.S2` rather than mid-word. A part that is wider than a line by
 * itself is broken at the character that fills the line.
 */
const BREAK_AFTER = /[\s.=_/\-:,;)]/;

function pieces(text: string): string[] {
  const out: string[] = [];
  let current = "";
  for (const ch of text) {
    current += ch;
    if (BREAK_AFTER.test(ch)) {
      out.push(current);
      current = "";
    }
  }
  if (current) out.push(current);
  return out;
}

/**
 * `text` set in lines of at most `maxWidth` px at `size` px, at most
 * `maxLines` of them; `cut` says whether the last line had to end in "…"
 * (then show the whole text in the node's tip).
 *
 * @example wrapText("H1 logitLens.answerProb.S2", 90, 12) // { lines: ["H1 logitLens.", "answerProb.S2"], cut: false }
 */
export function wrapText(
  text: string,
  maxWidth: number,
  size: number,
  maxLines = 3,
): { lines: string[]; cut: boolean } {
  const lines: string[] = [];
  let line = "";
  const push = () => {
    lines.push(line.trimEnd());
    line = "";
  };
  for (const piece of pieces(text.replace(/\s+/g, " ").trim())) {
    if (textWidth(line + piece.trimEnd(), size) <= maxWidth) {
      line += piece;
      continue;
    }
    if (line) push();
    // A piece wider than a whole line is broken where the line fills.
    let rest = piece;
    while (textWidth(rest.trimEnd(), size) > maxWidth) {
      let head = "";
      for (const ch of rest) {
        if (head && textWidth(head + ch, size) > maxWidth) break;
        head += ch;
      }
      lines.push(head);
      rest = rest.slice(head.length);
    }
    line = rest;
  }
  if (line.trim()) push();
  if (lines.length === 0) return { lines: [""], cut: false };
  if (lines.length <= maxLines) return { lines, cut: false };
  const kept = lines.slice(0, maxLines);
  // The next line did not fit after the last kept one, so the two together are cut, with "…" where they are.
  const last = fitText(`${kept[maxLines - 1]!} ${lines[maxLines]!}`, maxWidth, size);
  kept[maxLines - 1] = last.text;
  return { lines: kept, cut: true };
}
