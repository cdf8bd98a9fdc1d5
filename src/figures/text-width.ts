/**
 * How wide is a label, without a DOM to measure it in? Advance widths of a
 * Helvetica-like sans serif (the published core-font metrics, in thousandths
 * of an em) for printable ASCII; other characters take a typical width (wide
 * for CJK and emoji, zero for combining marks). The page's system font is
 * within a few percent of these, so figures leave a small margin.
 */

// Printable ASCII from " " (32) to "~" (126), thousandths of an em.
const ASCII: readonly number[] = [
  278,
  278,
  355,
  556,
  556,
  889,
  667,
  191,
  333,
  333,
  389,
  584,
  278,
  333,
  278,
  278, // space … /
  556,
  556,
  556,
  556,
  556,
  556,
  556,
  556,
  556,
  556, // 0 … 9
  278,
  278,
  584,
  584,
  584,
  556,
  1015, // : ; < = > ? @
  667,
  667,
  722,
  722,
  667,
  611,
  778,
  722,
  278,
  500,
  667,
  556,
  833, // A … M
  722,
  778,
  667,
  778,
  722,
  667,
  611,
  722,
  667,
  944,
  667,
  667,
  611, // N … Z
  278,
  278,
  278,
  469,
  556,
  333, // [ \ ] ^ _ `
  556,
  556,
  500,
  556,
  556,
  278,
  556,
  556,
  222,
  222,
  500,
  222,
  833, // a … m
  556,
  556,
  556,
  556,
  333,
  500,
  278,
  556,
  500,
  722,
  500,
  500,
  500, // n … z
  334,
  260,
  334,
  584, // { | } ~
];

const SPECIAL: Readonly<Record<string, number>> = {
  "…": 1000,
  "—": 1000,
  "–": 556,
  "−": 584,
  "×": 584,
  "±": 584,
  "≤": 549,
  "≥": 549,
  "·": 278,
  "•": 350,
  "°": 400,
  "’": 222,
  "‘": 222,
  "“": 333,
  "”": 333,
  "✓": 800,
  "✗": 800,
};

function charWidth(ch: string): number {
  const code = ch.codePointAt(0)!;
  if (code >= 32 && code <= 126) return ASCII[code - 32]!;
  const special = SPECIAL[ch];
  if (special !== undefined) return special;
  if (code >= 0x300 && code <= 0x36f) return 0; // combining marks
  if (code >= 0x2e80) return 1000; // CJK, fullwidth forms, emoji and beyond
  return 600;
}

/**
 * The width in px of `text` set at `size` px.
 *
 * @example textWidth("pass", 12) // 25.344 (556 + 556 + 500 + 500 thousandths of an em, at 12 px)
 */
export function textWidth(text: string, size: number): number {
  let units = 0;
  for (const ch of text) units += charWidth(ch);
  return (units * size) / 1000;
}

/**
 * `text` cut to fit `maxWidth` px at `size` px, with an ellipsis where it was
 * cut; `cut` says whether it was (then show the full text in the node's tip).
 *
 * @example fitText("pope-adversarial-split", 60, 12) // { text: "pope-ad…", cut: true }
 */
export function fitText(text: string, maxWidth: number, size: number): { text: string; cut: boolean } {
  if (textWidth(text, size) <= maxWidth) return { text, cut: false };
  const ellipsis = (charWidth("…") * size) / 1000;
  const budget = maxWidth - ellipsis;
  let used = 0;
  let out = "";
  for (const ch of text) {
    const w = (charWidth(ch) * size) / 1000;
    if (used + w > budget) break;
    used += w;
    out += ch;
  }
  return { text: `${out.trimEnd()}…`, cut: true };
}
