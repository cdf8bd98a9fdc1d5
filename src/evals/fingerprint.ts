import { canonicalJson } from "../datasets/canonical.ts";
import { sha256Hex } from "../datasets/hash.ts";

/**
 * What produced a run's numbers. Two runs are comparable when everything but
 * the system under test (the model, and the code that drives it) is the same.
 */
export interface Fingerprint {
  /** `datasetVersion()` of the cases the run used. */
  readonly datasetVersion: string;
  /** `caseHash()` per case id: a case whose input or expected changed is a different case. */
  readonly caseHashes: Readonly<Record<string, string>>;
  /** Evaluator name → version. */
  readonly evaluators: Readonly<Record<string, string>>;
  /** The model's identity: its key (or hub id) and, when known, its files' hashes. */
  readonly model: { readonly key: string; readonly files?: Readonly<Record<string, string>> };
  /** Generation settings (temperature, maxNewTokens, topK, seed) and the number of repeats. */
  readonly generation: Readonly<Record<string, unknown>>;
  /** A label for the thing varied on purpose (a prompt variant, a repair). */
  readonly variant?: string;
  /** The code that ran (a git commit); undefined when unknown. */
  readonly codeVersion?: string;
  readonly evalrxVersion?: string;
}

/**
 * A fingerprint as 12 hex characters (sha256 over its canonical JSON): equal
 * hashes mean identical fingerprints.
 *
 * @example fingerprintHash(run.fingerprint) // "3f9a0c1b22de"
 */
export function fingerprintHash(fingerprint: Fingerprint): string {
  return sha256Hex(canonicalJson(fingerprint)).slice(0, 12);
}

function diffKeys(a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>): string[] {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys.filter((k) => canonicalJson(a[k] ?? null) !== canonicalJson(b[k] ?? null));
}

/**
 * Are two runs comparable? Lists every way their fingerprints differ other
 * than the model and the code (which are what a comparison is meant to
 * compare): the dataset version, evaluator versions, generation settings, the
 * variant. Empty when they are comparable.
 *
 * @example comparability(a, { ...a, generation: { ...a.generation, temperature: 0.7 } })
 *   // ["generation settings differ: temperature 0 → 0.7 …"]
 */
export function comparability(baseline: Fingerprint, candidate: Fingerprint): string[] {
  const warnings: string[] = [];
  if (baseline.datasetVersion !== candidate.datasetVersion)
    warnings.push(
      `different dataset versions (${baseline.datasetVersion} → ${candidate.datasetVersion}): only cases both runs hold unchanged are compared`,
    );
  const evaluators = diffKeys(baseline.evaluators, candidate.evaluators);
  if (evaluators.length)
    warnings.push(
      `different evaluator versions: ${evaluators
        .map((k) => `${k} ${baseline.evaluators[k] ?? "(absent)"} → ${candidate.evaluators[k] ?? "(absent)"}`)
        .join(", ")}: a change in the score may be the evaluator's, not the model's`,
    );
  const generation = diffKeys(baseline.generation, candidate.generation);
  if (generation.length)
    warnings.push(
      `different generation settings: ${generation
        .map(
          (k) =>
            `${k} ${JSON.stringify(baseline.generation[k] ?? null)} → ${JSON.stringify(candidate.generation[k] ?? null)}`,
        )
        .join(", ")}`,
    );
  if ((baseline.variant ?? null) !== (candidate.variant ?? null))
    warnings.push(`different variants: ${baseline.variant ?? "(none)"} → ${candidate.variant ?? "(none)"}`);
  return warnings;
}
