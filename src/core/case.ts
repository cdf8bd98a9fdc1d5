/** What the model is given for one case: a prompt and, optionally, an image reference. */
export interface CaseInput {
  readonly prompt: string;
  /** A path relative to the dataset, a data URL, or a content hash (`sha256:…`) in the store. */
  readonly image?: string;
}

export type CaseStatus = "active" | "archived";

/**
 * One case of a dataset: what goes in, what should come out, and how it is
 * grouped. `split` is the user's own partition (e.g. POPE's random / popular /
 * adversarial); `cluster` groups cases that are not independent.
 */
export interface FailureCase {
  readonly id: string;
  readonly input: CaseInput;
  readonly expected?: unknown;
  readonly tags: readonly string[];
  readonly split?: string;
  readonly cluster?: string;
  readonly status: CaseStatus;
  /** Everything else the row carried, kept as candidate signals. */
  readonly meta: Readonly<Record<string, unknown>>;
}
