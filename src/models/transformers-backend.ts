import {
  AutoModelForCausalLM,
  AutoModelForImageTextToText,
  AutoProcessor,
  AutoTokenizer,
  RawImage,
  type PreTrainedModel,
  type Tensor,
} from "@huggingface/transformers";
import { CapabilityError } from "../core/capability.ts";
import type { Backend, GenerateOptions, Model, ModelInput, ModelSpec, Trace } from "../core/model.ts";
import { blackBoxCapabilities } from "./backends.ts";
import { toRgb } from "./image.ts";

/** How transformers.js should find and run models. Set `env` (local paths, remote loading) before loading. */
export interface TransformersConfig {
  /** The id or local folder name transformers.js loads for a spec (default: `spec.source`). */
  readonly modelId?: (spec: ModelSpec) => string;
  /** transformers.js device: "wasm" / "webgpu" in a page, "cpu" under Node. */
  readonly device?: string;
}

/** A transformers.js-loaded model that can also report generated token ids (for parity checks). */
export interface TransformersModel extends Model {
  generateIds(input: ModelInput, options?: GenerateOptions): Promise<number[]>;
  /** Text of generated ids, special tokens skipped. */
  decode(ids: readonly number[]): string;
}

/** A backend whose models also report generated ids. */
export interface TransformersBackend extends Omit<Backend, "load"> {
  load(spec: ModelSpec): Promise<TransformersModel>;
}

/**
 * The transformers.js backend: tokenizer, processor and `generate()` for any
 * supported hub model (or a local folder). Black box for internals:
 * transformers.js's generate does not return decoder attention.
 */
export function transformersBackend(config: TransformersConfig = {}): TransformersBackend {
  const provides = blackBoxCapabilities;
  return {
    kind: "transformers",
    provides,
    async load(spec) {
      const id = config.modelId?.(spec) ?? spec.source;
      const device = config.device as never;
      const image = spec.modalities.has("image");
      const processor = image ? await AutoProcessor.from_pretrained(id) : undefined;
      const tokenizer = image ? processor!.tokenizer! : await AutoTokenizer.from_pretrained(id);
      const model: PreTrainedModel = image
        ? await AutoModelForImageTextToText.from_pretrained(id, { dtype: "fp32", ...(device ? { device } : {}) })
        : await AutoModelForCausalLM.from_pretrained(id, { dtype: "fp32", ...(device ? { device } : {}) });
      const capabilities = provides(spec);
      const generateIds = async (input: ModelInput, options: GenerateOptions = {}) => {
        if (options.attentionBias)
          throw new CapabilityError(["attention_write"], [...capabilities], `the transformers backend for ${spec.key}`);
        let inputs: Record<string, unknown>;
        if (input.image !== undefined) {
          if (!processor) throw new Error(`${spec.key} takes text only`);
          const { width, height, rgb } = toRgb(input.image);
          inputs = await processor(new RawImage(rgb, width, height, 3), input.prompt);
        } else inputs = tokenizer(input.prompt) as unknown as Record<string, unknown>;
        const promptLength = (inputs.input_ids as Tensor).dims[1]!;
        const sampled = (options.temperature ?? 0) > 0;
        const out = (await model.generate({
          ...inputs,
          max_new_tokens: options.maxNewTokens ?? 32,
          do_sample: sampled,
          ...(sampled ? { temperature: options.temperature, ...(options.topK ? { top_k: options.topK } : {}) } : {}),
        })) as Tensor;
        const ids = (out.tolist() as bigint[][])[0]!.slice(promptLength).map(Number);
        const eos = tokenizer.eos_token_id;
        return eos !== undefined && ids[ids.length - 1] === eos ? ids.slice(0, -1) : ids;
      };
      return {
        spec,
        capabilities,
        generateIds,
        decode: (ids) => tokenizer.decode([...ids], { skip_special_tokens: true }).trim(),
        async generate(input, options) {
          const ids = await generateIds(input, options);
          return tokenizer.decode(ids, { skip_special_tokens: true }).trim();
        },
        async forward(): Promise<Trace> {
          throw new CapabilityError(
            ["attention", "logits"],
            [...capabilities],
            `the transformers backend for ${spec.key}`,
          );
        },
        async dispose() {
          await model.dispose();
        },
      };
    },
  };
}
