import type { GenerateOptions, Model, ModelInput, ModelSpec } from "../core/index.ts";

/**
 * A stand-in model for tests of the eval machinery (not of a runtime): it
 * answers each prompt from a function, throws for prompts containing "boom",
 * and records every call with its seed.
 */
export class ScriptedModel implements Model {
  readonly spec: ModelSpec;
  readonly capabilities = new Set<never>();
  readonly calls: { prompt: string; seed?: number }[] = [];
  constructor(
    private readonly answer: (prompt: string, seed: number) => string,
    private readonly delayMs = 0,
    key = "scripted",
  ) {
    this.spec = { key } as ModelSpec;
  }
  async generate(input: ModelInput, options: GenerateOptions = {}): Promise<string> {
    this.calls.push({ prompt: input.prompt, ...(options.seed !== undefined ? { seed: options.seed } : {}) });
    if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
    options.signal?.throwIfAborted();
    if (input.prompt.includes("boom")) throw new Error("out of memory");
    return this.answer(input.prompt, options.seed ?? 0);
  }
  forward(): never {
    throw new Error("ScriptedModel has no internals to read");
  }
  async dispose() {}
}
