import { proxy } from "comlink";
import type { Explanation, Intervention } from "../../../../workers/explain.ts";
import type { ModelSource } from "../../../../workers/model.worker.ts";
import type { QueryResult } from "../../../../workers/data-view.ts";
import { decodeDataUrl, sniffImage } from "../../../datasets/images.ts";
import type { StoredCase } from "../../../store/types.ts";
import type { AppServices } from "../../app/context.ts";
import { errorText } from "../../app/errors.ts";
import { sourceName } from "../../app/model.svelte.ts";
import type { CaseRowView } from "../datasets/case-filter.ts";
import { judgeAnswer, type AnswerVerdict, type MapChoice, type TokenColouring } from "./explain-view.ts";

/** Rows the case picker lists at once (the search narrows a large dataset). */
const LISTED = 60;

/** A run's verdict on the chosen case. */
export interface CaseVerdict {
  readonly runId: string;
  readonly passed: boolean;
  readonly output: string;
}

/** The intervention form: a kind (or none) and its amounts. */
export interface InterventionFields {
  kind: "none" | Intervention["kind"];
  /** Reweighting: added to the image tokens' attention logits; sink: taken off the first token's. */
  value: number;
  /** Reweighting at one layer (0-based), or −1 for every layer. */
  layer: number;
  /** Crop: the window's share of the image. */
  fraction: number;
}

/** The intervention the fields describe, or undefined for none. */
export function interventionOf(f: InterventionFields): Intervention | undefined {
  switch (f.kind) {
    case "none":
      return undefined;
    case "reweight":
      return { kind: "reweight", value: Number(f.value), ...(f.layer >= 0 ? { layer: Number(f.layer) } : {}) };
    case "sink":
      return { kind: "sink", value: Math.abs(Number(f.value)) };
    case "crop":
      return { kind: "crop", fraction: Number(f.fraction) };
  }
}

/**
 * The playground: a case picked from a stored dataset (or an image dropped
 * in), the question, the model's answer explained (tokens, heatmaps, the
 * attention matrix, the logit lens) in the model worker, and the same
 * question under an intervention beside it. Newest request wins: an answer
 * that arrives after a newer question was asked is dropped, and a question
 * that fails clears the old answer.
 */
export class PlaygroundState {
  dataset = $state("");
  search = $state("");
  rows = $state.raw<readonly CaseRowView[]>([]);
  matched = $state<number | undefined>();
  listFailure = $state<string | undefined>();
  chosen = $state.raw<StoredCase | undefined>();
  /** An image dropped in instead of a case's. */
  own = $state.raw<{ readonly name: string } | undefined>();
  imageUrl = $state<string | undefined>();
  verdicts = $state.raw<readonly CaseVerdict[]>([]);
  question = $state("");
  maxNewTokens = $state(16);
  model = $state("");
  explanation = $state.raw<Explanation | undefined>();
  intervened = $state.raw<Explanation | undefined>();
  /** Each answer judged against the chosen case's expected answer (none for a dropped image). */
  plainVerdict = $state.raw<AnswerVerdict | undefined>();
  intervenedVerdict = $state.raw<AnswerVerdict | undefined>();
  asking = $state(false);
  failure = $state<string | undefined>();
  interventionFailure = $state<string | undefined>();
  intervention = $state<InterventionFields>({ kind: "reweight", value: 2, layer: -1, fraction: 0.5 });
  map = $state<MapChoice>({ mode: "mean", layer: -1, head: 0 });
  opacity = $state(0.6);
  colouring = $state<TokenColouring>("entropy");
  #bytes: Uint8Array | undefined;
  #viewId: number | undefined;
  #listToken = 0;
  #askToken = 0;
  #caseToken = 0;
  readonly #app: AppServices;

  constructor(app: AppServices) {
    this.#app = app;
  }

  /** Bundled models and the loaded one; the default is the loaded model, else tiny-vlm. */
  get modelOptions(): readonly { value: string; label: string; source: ModelSource }[] {
    return this.#app.models.offered;
  }

  get modelValue(): string {
    if (this.model) return this.model;
    const source = this.#app.models.loadedSource;
    return source ? sourceName(source) : "bundled:tiny-vlm";
  }

  /** Opens a dataset's cases in the data worker and lists the first ones (or those the search matches). */
  async openDataset(id: string): Promise<void> {
    if (id === this.dataset && this.#viewId !== undefined) return;
    this.dataset = id;
    this.rows = [];
    this.matched = undefined;
    this.listFailure = undefined;
    const previous = this.#viewId;
    this.#viewId = undefined;
    if (previous !== undefined) void this.#app.imports.call((api) => api.closeView(previous)).catch(() => undefined);
    if (!id) return;
    const token = ++this.#listToken;
    try {
      const opened = await this.#app.imports.call((api) =>
        api.openView(
          this.#app.store.db,
          id,
          proxy(() => {}),
          LISTED,
        ),
      );
      if (token !== this.#listToken) {
        void this.#app.imports.call((api) => api.closeView(opened.viewId)).catch(() => undefined);
        return;
      }
      this.#viewId = opened.viewId;
      this.rows = opened.rows;
      this.matched = opened.record.caseCount;
      if (this.search.trim()) await this.filter(this.search);
    } catch (error) {
      if (token === this.#listToken) this.listFailure = errorText(error);
    }
  }

  /** Narrows the list to cases whose id contains `text` (newest search wins). */
  async filter(text: string): Promise<void> {
    this.search = text;
    const viewId = this.#viewId;
    if (viewId === undefined) return;
    const token = ++this.#listToken;
    try {
      const result = await this.#app.imports.call<QueryResult>((api) => api.query(viewId, { id: text }));
      if (token !== this.#listToken || "stale" in result) return;
      if ("error" in result) {
        this.listFailure = result.error;
        return;
      }
      this.matched = result.count;
      const rows = await this.#app.imports.call((api) => api.rows(viewId, result.generation, 0, LISTED));
      if (token === this.#listToken && rows) this.rows = rows;
      this.listFailure = undefined;
    } catch (error) {
      if (token === this.#listToken) this.listFailure = errorText(error);
    }
  }

  /** Takes a case (by its dataset position or id): its question, image and what runs said of it, then explains it. */
  async chooseCase(datasetId: string, caseId: string): Promise<void> {
    const token = ++this.#caseToken;
    this.failure = undefined;
    try {
      const store = await this.#app.store.ready;
      const stored = await store.getCase(datasetId, caseId);
      if (token !== this.#caseToken) return;
      if (!stored) throw new Error(`dataset '${datasetId}' has no case '${caseId}' in this browser`);
      const image = stored.input.image ? await this.#storedImage(stored.input.image) : undefined;
      if (token !== this.#caseToken) return;
      this.chosen = stored;
      this.own = undefined;
      this.question = stored.input.prompt;
      await this.#setImage(image);
      void this.#loadVerdicts(datasetId, caseId, token);
      await this.ask();
    } catch (error) {
      if (token === this.#caseToken) {
        ++this.#askToken;
        this.asking = false;
        this.#clear();
        this.failure = errorText(error);
      }
    }
  }

  /** Uses a dropped image instead of a case's (the question stays; there is no expected answer). */
  async useImage(file: File): Promise<void> {
    ++this.#caseToken;
    this.failure = undefined;
    const bytes = new Uint8Array(await file.arrayBuffer());
    const sniffed = sniffImage(bytes);
    if ("reason" in sniffed) {
      ++this.#askToken;
      this.asking = false;
      this.#clear();
      this.failure = `${file.name}: ${sniffed.reason}`;
      return;
    }
    this.chosen = undefined;
    this.verdicts = [];
    this.own = { name: file.name };
    await this.#setImage({ bytes, type: sniffed.type });
    if (!this.question.trim()) this.question = "<image> what is in the image ?";
    await this.ask();
  }

  async #storedImage(ref: string): Promise<{ bytes: Uint8Array; type: string }> {
    if (ref.startsWith("data:")) {
      const bytes = decodeDataUrl(ref);
      if (!(bytes instanceof Uint8Array)) throw new Error(`the case's image (a data URL): ${bytes.reason}`);
      const sniffed = sniffImage(bytes);
      if ("reason" in sniffed) throw new Error(`the case's image (a data URL): ${sniffed.reason}`);
      return { bytes, type: sniffed.type };
    }
    const store = await this.#app.store.ready;
    const image = ref.startsWith("sha256:") ? await store.getImage(ref) : undefined;
    if (!image)
      throw new Error(
        ref.startsWith("sha256:")
          ? `image ${ref} is not in this browser's store; import the dataset again with its images`
          : `image '${ref}' was not imported with the dataset (only stored images and data URLs can be read); import the dataset again together with its images`,
      );
    return { bytes: image.bytes, type: image.type };
  }

  /** A new image: the answers about the old one go (and an answer still on its way about it is dropped). */
  async #setImage(image: { bytes: Uint8Array; type: string } | undefined): Promise<void> {
    ++this.#askToken;
    this.asking = false;
    this.#clear();
    if (this.imageUrl) URL.revokeObjectURL(this.imageUrl);
    this.#bytes = image?.bytes;
    this.imageUrl = image ? URL.createObjectURL(new Blob([image.bytes as BlobPart], { type: image.type })) : undefined;
  }

  /** What finished runs on this dataset said of the case (the newest three that judged it). */
  async #loadVerdicts(datasetId: string, caseId: string, token: number): Promise<void> {
    this.verdicts = [];
    const runs = this.#app.store.runs
      .filter((r) => r.dataset === datasetId && r.kind === "eval" && r.status === "finished")
      .slice(0, 3);
    const out: CaseVerdict[] = [];
    for (const run of runs) {
      const detail = await this.#app.stats.api.runCase(this.#app.store.db, run.id, caseId).catch(() => undefined);
      const trial = detail?.trials[0];
      if (trial && !trial.errored) out.push({ runId: run.id, passed: trial.passed, output: trial.output });
    }
    if (token === this.#caseToken) this.verdicts = out;
  }

  /**
   * Asks the question (and, with an intervention chosen, asks it again under
   * it); the newest ask wins, and a failure clears the answer shown before.
   */
  async ask(): Promise<void> {
    const token = ++this.#askToken;
    this.asking = true;
    this.failure = undefined;
    this.interventionFailure = undefined;
    const row = this.chosen;
    const judge = async (answer: string) => (row ? judgeAnswer(answer, row).catch(() => undefined) : undefined);
    try {
      const option = this.modelOptions.find((o) => o.value === this.modelValue) ?? this.modelOptions[0]!;
      await this.#app.models.ensure(option.source);
      const request = {
        prompt: this.question,
        ...(this.#bytes ? { image: this.#bytes } : {}),
        maxNewTokens: Math.max(1, Math.floor(Number(this.maxNewTokens)) || 16),
      };
      const explanation = await this.#app.models.client.call((api) => api.explain(request));
      const verdict = await judge(explanation.answer);
      if (token !== this.#askToken) return;
      this.explanation = explanation;
      this.plainVerdict = verdict;
      this.intervened = undefined;
      this.intervenedVerdict = undefined;
      const intervention = interventionOf(this.intervention);
      if (!intervention) return;
      try {
        const intervened = await this.#app.models.client.call((api) => api.explain({ ...request, intervention }));
        const changed = await judge(intervened.answer);
        if (token !== this.#askToken) return;
        this.intervened = intervened;
        this.intervenedVerdict = changed;
      } catch (error) {
        if (token === this.#askToken) this.interventionFailure = errorText(error);
      }
    } catch (error) {
      if (token !== this.#askToken) return;
      this.#clear();
      this.failure = errorText(error);
    } finally {
      if (token === this.#askToken) this.asking = false;
    }
  }

  /** Stops the question being answered (the model worker aborts it); the answers shown before stay. */
  cancel(): void {
    if (!this.asking) return;
    ++this.#askToken;
    this.asking = false;
    void this.#app.models.client.call((api) => api.cancel()).catch(() => undefined);
  }

  /** Drops the answers shown (a question that failed must not leave an older answer looking like its own). */
  #clear(): void {
    this.explanation = undefined;
    this.intervened = undefined;
    this.plainVerdict = undefined;
    this.intervenedVerdict = undefined;
  }

  /** One layer × head of an explanation's attention, from the worker (the matrix view). */
  async matrix(ex: Explanation, layer: number, head: number): Promise<{ size: number; data: Float32Array }> {
    return this.#app.models.client.call((api) => api.attentionMatrix(ex.id, layer, head));
  }

  dispose(): void {
    if (this.imageUrl) URL.revokeObjectURL(this.imageUrl);
    const viewId = this.#viewId;
    if (viewId !== undefined) void this.#app.imports.call((api) => api.closeView(viewId)).catch(() => undefined);
  }
}
