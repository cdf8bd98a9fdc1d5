import { Tokenizer } from "@huggingface/tokenizers";
import { MissingFileError, readJson, type FileSource } from "./session.ts";

/** A model's tokenizer plus the ids that matter to generation. */
export interface TextCodec {
  readonly tokenizer: Tokenizer;
  /** Token ids that end generation (EOS, from the tokenizer config and generation config). */
  readonly stopIds: ReadonlySet<number>;
  encode(text: string, addSpecialTokens: boolean): number[];
  decode(ids: readonly number[]): string;
  token(id: number): string;
  idOf(token: string): number | undefined;
}

/**
 * Loads `tokenizer.json` + `tokenizer_config.json` (the transformers.js /
 * tokenizers.js format) and collects the stop ids. A folder without them gets
 * an error that names the missing file.
 *
 * @example
 * const codec = await loadTextCodec(files, [2]);
 * codec.encode("<image> is there a red circle ?", true) // → [1, 4, 5, 6, 7, 8, 11, 14]
 */
export async function loadTextCodec(files: FileSource, eosIds: readonly number[]): Promise<TextCodec> {
  const read = async (path: string) => {
    try {
      return await readJson(files, path);
    } catch (error) {
      if (error instanceof MissingFileError)
        throw new Error(
          `missing tokenizer: ${error.message}; a model folder needs tokenizer.json and tokenizer_config.json`,
          { cause: error },
        );
      throw error;
    }
  };
  const [json, config] = await Promise.all([read("tokenizer.json"), read("tokenizer_config.json")]);
  let tokenizer: Tokenizer;
  try {
    tokenizer = new Tokenizer(json, config);
  } catch (error) {
    throw new Error(`tokenizer.json could not be read as a tokenizer: ${(error as Error).message}`, { cause: error });
  }
  const eos = config.eos_token;
  const eosText = typeof eos === "string" ? eos : (eos as { content?: string } | undefined)?.content;
  return textCodec(tokenizer, eosIds, eosText);
}

/**
 * A codec over a tokenizer already made (a `tokenizers` Tokenizer, such as
 * the one inside a transformers.js tokenizer): stop ids are `eosIds` plus the
 * id of `eosToken` when the vocabulary has it.
 *
 * @example
 * textCodec(tokenizer, [2]).decode([5, 6]) // → "3 1"
 */
export function textCodec(tokenizer: Tokenizer, eosIds: readonly number[], eosToken?: string): TextCodec {
  const stopIds = new Set<number>(eosIds);
  if (eosToken !== undefined) {
    const id = tokenizer.token_to_id(eosToken);
    if (id !== undefined) stopIds.add(id);
  }
  return {
    tokenizer,
    stopIds,
    encode: (text, addSpecialTokens) => tokenizer.encode(text, { add_special_tokens: addSpecialTokens }).ids,
    decode: (ids) => (ids.length ? tokenizer.decode([...ids], { skip_special_tokens: true }) : ""),
    token: (id) => tokenizer.id_to_token(id) ?? `<${id}>`,
    idOf: (token) => tokenizer.token_to_id(token),
  };
}
