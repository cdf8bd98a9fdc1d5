import type { DatasetFacets } from "../../../../workers/run-tables.ts";
import type { EvalConfig } from "../../../evals/config.ts";
import { listSpecs } from "../../../models/specs/index.ts";
import type { AppServices } from "../../app/context.ts";
import { errorText } from "../../app/errors.ts";
import type { ModelChoice } from "../../app/jobs.svelte.ts";
import { DEFAULT_FIELDS, fieldText, fieldsOf, formConfig, pageConfig, type EvalFormFields } from "./eval-form.ts";

/** A model the form offers: its name in the list and how the worker loads it. */
export interface ModelOption {
  readonly value: string;
  readonly label: string;
  readonly choice: ModelChoice;
}

/**
 * The new-eval form: fields a person fills, the dataset's splits and tags
 * (read in the stats worker), the config it makes (checked as the CLI checks
 * it, with the first wrong field named), and Start.
 */
export class EvalFormState {
  fields = $state<EvalFormFields>({ ...DEFAULT_FIELDS, evaluators: {} });
  model = $state("bundled:tiny-vlm");
  facets = $state.raw<DatasetFacets | undefined>();
  facetsFailure = $state<string | undefined>();
  starting = $state(false);
  failure = $state<string | undefined>();
  #facetsToken = 0;
  /** What the form last suggested for the dataset (replaced when the dataset changes, unless the user edited it). */
  #suggested: { evaluators: string; maxNewTokens: string } | undefined;
  readonly #app: AppServices;

  constructor(app: AppServices) {
    this.#app = app;
  }

  /** Bundled models, and the model loaded in the worker when it is another one. */
  get modelOptions(): readonly ModelOption[] {
    return this.#app.models.offered.map(({ value, label, source }) => ({ value, label, choice: { source } }));
  }

  get modelChoice(): ModelOption | undefined {
    return this.modelOptions.find((o) => o.value === this.model);
  }

  /** The config the form describes, or the reason it is not one yet. */
  get config(): { config?: EvalConfig; error?: string } {
    try {
      const option = this.modelChoice;
      if (!option) return { error: "model: choose a model" };
      const key = option.choice.source.kind === "bundled" ? option.choice.source.key : option.label.split(" ")[0]!;
      return { config: formConfig(this.fields, key) };
    } catch (error) {
      return { error: errorText(error) };
    }
  }

  /** Cases × repeats the selection will run (the sample caps the count), when the facets are known. */
  get plannedCases(): number | undefined {
    const f = this.facets;
    if (!f) return undefined;
    let n = f.active;
    if (this.fields.split.trim()) n = f.splits.find(([s]) => s === this.fields.split.trim())?.[1] ?? 0;
    const sample = Number(fieldText(this.fields.sample));
    if (fieldText(this.fields.sample) && Number.isInteger(sample) && sample > 0) n = Math.min(n, sample);
    return n;
  }

  chooseDataset(id: string): void {
    this.fields.dataset = id;
    this.fields.split = "";
    this.fields.tags = "";
    this.facets = undefined;
    this.facetsFailure = undefined;
    const token = ++this.#facetsToken;
    this.#app.stats.api.datasetFacets(this.#app.store.db, id).then(
      (facets) => {
        if (token !== this.#facetsToken) return;
        this.facets = facets;
        // A yes/no task: suggest the POPE-style evaluator and a short answer; otherwise exact match.
        // A suggestion is replaced when the dataset changes; the user's own choice never is.
        const untouched =
          !Object.values(this.fields.evaluators).some(Boolean) ||
          JSON.stringify(this.fields.evaluators) === this.#suggested?.evaluators;
        const yesNo = facets.yesNoShare > 0.9;
        if (untouched) this.fields.evaluators = yesNo ? { yesNo: true } : { exact: true };
        if (String(this.fields.maxNewTokens) === (this.#suggested?.maxNewTokens ?? DEFAULT_FIELDS.maxNewTokens))
          this.fields.maxNewTokens = yesNo ? "3" : DEFAULT_FIELDS.maxNewTokens;
        this.#suggested = {
          evaluators: JSON.stringify(this.fields.evaluators),
          maxNewTokens: String(this.fields.maxNewTokens),
        };
      },
      (error: unknown) => {
        if (token === this.#facetsToken) this.facetsFailure = errorText(error);
      },
    );
  }

  /** Fills the form from an eval config file of the CLI's format. */
  async openConfig(file: File): Promise<void> {
    this.failure = undefined;
    try {
      const config = pageConfig(await file.text(), this.#app.store.datasets);
      const bundled = listSpecs().find((s) => s.key === config.model);
      if (!bundled)
        throw new Error(
          `the config names model '${config.model}'; the page runs bundled models by key (${listSpecs()
            .map((s) => s.key)
            .join(", ")}) or the model loaded on the Models page`,
        );
      this.model = `bundled:${bundled.key}`;
      const dataset = config.dataset;
      this.chooseDataset(dataset);
      this.fields = fieldsOf(config);
    } catch (error) {
      this.failure = `${file.name}: ${errorText(error)}`;
    }
  }

  /** Starts the eval; resolves with the new run's id (the job goes on in the model worker). */
  async start(): Promise<string | undefined> {
    const { config, error } = this.config;
    const option = this.modelChoice;
    if (!config || !option) {
      this.failure = error;
      return undefined;
    }
    this.starting = true;
    this.failure = undefined;
    try {
      return await this.#app.jobs.startEval(config, option.choice);
    } catch (e) {
      this.failure = errorText(e);
      return undefined;
    } finally {
      this.starting = false;
    }
  }
}
