/**
 * Meaning-preserving rewrites of a prompt, used by `promptContrast` (does the
 * answer change?) and by the repair ladder (L1 prompt rewrites, L2
 * self-consistency). They reuse the prompt's own words plus common ones, so a
 * small closed-vocabulary model reads them without unknown tokens.
 */

export interface Rewrite {
  readonly name: string;
  readonly description: string;
  apply(prompt: string): string;
}

/** Splits a prompt into its image marker (kept first) and the question. */
function parts(prompt: string): { marker: string; question: string } {
  const m = /^(\s*<image>\s*)(.*)$/s.exec(prompt);
  return m ? { marker: m[1]!.trimEnd() + " ", question: m[2]!.trim() } : { marker: "", question: prompt.trim() };
}

/** The meaning-preserving rewrites, by name; each keeps the image marker first. */
export const REWRITES: readonly Rewrite[] = [
  {
    name: "context",
    description: "say first that the question is about the image: 'the image . <question>'",
    apply: (p) => {
      const { marker, question } = parts(p);
      return `${marker}the image . ${question}`;
    },
  },
  {
    name: "restate",
    description: "ask the question twice: '<question> <question>'",
    apply: (p) => {
      const { marker, question } = parts(p);
      return `${marker}${question} ${question}`;
    },
  },
];

/** The rewrite named `name`; throws naming the known ones. */
export function rewrite(name: string): Rewrite {
  const r = REWRITES.find((x) => x.name === name);
  if (!r) throw new Error(`unknown rewrite '${name}'; known: ${REWRITES.map((x) => `'${x.name}'`).join(", ")}`);
  return r;
}

/** The first word of an answer, lowercased: what "the answer changed" compares. */
export function answerKey(output: string): string {
  return (output
    .trim()
    .toLowerCase()
    .match(/[a-z0-9]+/) ?? [""])[0]!;
}
