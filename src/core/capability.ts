/**
 * What a runtime can give. Analyzers declare the capabilities they `require`;
 * backends declare the ones they `provide`; `compose()` refuses a pairing that
 * cannot work before any weight is loaded.
 */
export const CAPABILITIES = ["generate", "logits", "attention", "hidden_states", "attention_write", "image"] as const;

export type Capability = (typeof CAPABILITIES)[number];

/** True when `value` names a known capability. */
export function isCapability(value: unknown): value is Capability {
  return typeof value === "string" && (CAPABILITIES as readonly string[]).includes(value);
}

/**
 * Thrown when what is wanted of a model cannot be given by the chosen backend
 * (for example attention from a black-box API). It lists what is missing and
 * what the backend does provide, so the caller can choose another backend.
 */
export class CapabilityError extends Error {
  override readonly name = "CapabilityError";
  constructor(
    readonly missing: readonly Capability[],
    readonly provided: readonly Capability[],
    readonly context: string,
  ) {
    super(
      `${context} cannot provide ${missing.map((c) => `'${c}'`).join(", ")}; ` +
        `it provides [${provided.map((c) => `'${c}'`).join(", ")}]. ` +
        `Choose a backend that runs the model white-box (ort) or drop the analyzers that need it.`,
    );
  }
}
