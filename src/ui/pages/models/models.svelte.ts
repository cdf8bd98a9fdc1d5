import type { Capability } from "../../../core/capability.ts";
import { isHubId } from "../../../models/hub.ts";
import { listSpecs } from "../../../models/specs/index.ts";
import type { ModelInspection, ModelSource } from "../../../../workers/model.worker.ts";
import type { AppServices } from "../../app/context.ts";
import { errorText } from "../../app/errors.ts";
import type { ModelLoadOptions } from "../../app/model.svelte.ts";
import { specView, type ModelSummary, type SpecView } from "../../app/model-summary.ts";
import type { DroppedFile } from "../../components/files.ts";
import { folderProblems, inspectionProblems, modelFolder } from "./folder.ts";

/** Which runtime a load uses: white-box ONNX Runtime (ours), or transformers.js generation (answers only). */
export type BackendKind = NonNullable<ModelLoadOptions["backend"]>;

/** One model the page lists. */
export interface ModelEntry {
  /** `sourceName`: `bundled:tiny-vlm`, `files:<folder>`, `hub:<owner/name>`. */
  readonly name: string;
  readonly kind: "bundled" | "folder" | "hub";
  readonly title: string;
  /** Where it comes from, in words. */
  readonly origin: string;
  /** The spec, when known before loading (bundled) or from the last load. */
  readonly spec?: SpecView;
  /** What the last load of it found (attention status, capabilities, sizes). */
  readonly summary?: ModelSummary;
  /** What inspecting its files found (no session): spec, files, capabilities, attention status. */
  readonly inspection?: ModelInspection;
  /** Bytes of its files, when known. */
  readonly bytes?: number;
  /** Whether transformers.js can load it too (bundled models and hub ids). */
  readonly transformers: boolean;
}

/** The capabilities a user can ask for before loading. */
export const WANTABLE: readonly { readonly capability: Capability; readonly label: string }[] = [
  { capability: "attention", label: "attention" },
  { capability: "hidden_states", label: "hidden states" },
  { capability: "logits", label: "logits" },
  { capability: "attention_write", label: "attention edits" },
];

/** The Models page: the list, what each entry is, and loading, adding and forgetting models. */
export class ModelsPageState {
  /** Capabilities the user's analyses need: a model that cannot give them is refused before its weights load. */
  want = $state<Capability[]>([]);
  /** The backend chosen per entry (default: ort). */
  backends = $state<Record<string, BackendKind>>({});
  hubId = $state("");
  hubProblem = $state<string | undefined>();
  /** The last dropped folder's problems (nothing was kept). */
  folderProblems = $state.raw<readonly string[]>([]);
  folderNote = $state<string | undefined>();
  adding = $state(false);
  /** Why the last action on an entry failed, by entry name. */
  failures = $state.raw<Readonly<Record<string, string>>>({});
  bundledBytes = $state.raw<Readonly<Record<string, number>>>({});
  readonly #app: AppServices;

  /** Entries being inspected now. */
  inspecting = $state.raw<ReadonlySet<string>>(new Set());

  constructor(app: AppServices) {
    this.#app = app;
    void this.#measureBundled();
    void this.#inspectBundled();
  }

  /** The bundled models are small and served by the app: inspect them at once (one after the other). */
  async #inspectBundled(): Promise<void> {
    for (const entry of this.entries)
      if (entry.kind === "bundled" && !entry.inspection) await this.inspect(entry).catch(() => undefined);
  }

  /** Reads an entry's config files and ONNX protobufs in the worker (no session) to show what it is. */
  async inspect(entry: ModelEntry): Promise<void> {
    this.inspecting = new Set([...this.inspecting, entry.name]);
    try {
      await this.#app.models.inspect(await this.#source(entry));
    } catch (error) {
      this.#fail(entry.name, `inspecting ${entry.title} failed: ${errorText(error)}`);
    } finally {
      this.inspecting = new Set([...this.inspecting].filter((n) => n !== entry.name));
    }
  }

  /** Every model the page knows: bundled, the user's folders, and hub models kept in this browser. */
  get entries(): ModelEntry[] {
    const { models } = this.#app;
    /** An entry with what the last load and an inspection of it found, when they exist. */
    const known = (entry: Omit<ModelEntry, "summary" | "inspection">): ModelEntry => {
      const summary = models.summaries[entry.name] ?? models.summaries[`${entry.name}#transformers`];
      const inspection = models.inspections[entry.name];
      const spec = entry.spec ?? summary?.spec;
      return {
        ...entry,
        ...(summary ? { summary } : {}),
        ...(inspection ? { inspection } : {}),
        ...(spec ? { spec } : {}),
        ...(entry.bytes === undefined && summary ? { bytes: summary.bytes } : {}),
      };
    };
    return [
      ...listSpecs().map((spec) =>
        known({
          name: `bundled:${spec.key}`,
          kind: "bundled",
          title: spec.key,
          origin: "bundled with the app",
          spec: specView(spec),
          ...(this.bundledBytes[spec.key] !== undefined ? { bytes: this.bundledBytes[spec.key]! } : {}),
          transformers: true,
        }),
      ),
      ...models.folders.map((folder) =>
        known({
          name: `files:${folder.name}`,
          kind: "folder",
          title: folder.name,
          origin: `your folder, kept in this browser (${folder.files.length} files)`,
          bytes: folder.bytes,
          transformers: false,
        }),
      ),
      ...models.hubModels.map((cached) =>
        known({
          name: `hub:${cached.id}`,
          kind: "hub",
          title: cached.id,
          origin: `Hugging Face hub id, ${cached.files.length} files kept in this browser`,
          bytes: cached.bytes,
          transformers: true,
        }),
      ),
    ];
  }

  /** The backend an entry loads with: the one picked, else the one it was last loaded with, else ort. */
  backendOf(entry: ModelEntry): BackendKind {
    if (!entry.transformers) return "ort";
    const last = this.#app.models.summaries[`${entry.name}#transformers`] ? "transformers" : undefined;
    const ort = this.#app.models.summaries[entry.name];
    const recent =
      last && ort
        ? this.#app.models.summaries[`${entry.name}#transformers`]!.loadedAt > ort.loadedAt
          ? "transformers"
          : "ort"
        : (last ?? "ort");
    return this.backends[entry.name] ?? recent;
  }

  setBackend(entry: ModelEntry, backend: BackendKind): void {
    this.backends = { ...this.backends, [entry.name]: backend };
  }

  /** Is this entry the loaded model (with either backend)? */
  isLoaded(entry: ModelEntry): boolean {
    const loaded = this.#app.models.loadedName;
    return loaded === entry.name || loaded === `${entry.name}#transformers`;
  }

  isLoading(entry: ModelEntry): boolean {
    return this.#app.models.loading?.name === entry.name;
  }

  toggleWant(capability: Capability, on: boolean): void {
    this.want = on ? [...new Set([...this.want, capability])] : this.want.filter((c) => c !== capability);
  }

  #fail(name: string, message: string | undefined): void {
    const next = { ...this.failures };
    if (message === undefined) delete next[name];
    else next[name] = message;
    this.failures = next;
  }

  async #source(entry: ModelEntry): Promise<ModelSource> {
    switch (entry.kind) {
      case "bundled":
        return { kind: "bundled", key: entry.title };
      case "hub":
        return { kind: "hub", id: entry.title };
      case "folder":
        return this.#app.models.folderSource(entry.title);
    }
  }

  /** Loads an entry with its chosen backend and the capabilities asked for. */
  async load(entry: ModelEntry): Promise<void> {
    this.#fail(entry.name, undefined);
    const backend = this.backendOf(entry);
    try {
      const source = await this.#source(entry);
      await this.#app.models.load(source, {
        ...(backend === "transformers" ? { backend } : {}),
        ...(this.want.length ? { want: [...this.want] } : {}),
      });
    } catch (error) {
      if (!/superseded/.test(errorText(error))) this.#fail(entry.name, errorText(error));
    }
  }

  async unload(): Promise<void> {
    await this.#app.models.unload();
  }

  /** Checks a dropped or picked folder, keeps it in this browser and loads it; or says which files are wrong. */
  async addFolder(dropped: readonly DroppedFile[]): Promise<void> {
    this.folderProblems = [];
    this.folderNote = undefined;
    const folder = modelFolder(dropped);
    const config = folder.files.find((f) => f.path === "config.json");
    let configText: string | undefined;
    try {
      configText = config ? await config.file.text() : undefined;
    } catch (error) {
      this.folderProblems = [`config.json could not be read: ${errorText(error)}`];
      return;
    }
    const problems = folderProblems(
      folder.files.map((f) => f.path),
      configText,
    );
    if (problems.length) {
      this.folderProblems = problems.map((p) => `${folder.name}: ${p}`);
      return;
    }
    this.adding = true;
    try {
      // The worker reads the graphs (no session): a missing or unreadable graph is named before anything is kept.
      const files = new Map(folder.files.map((f) => [f.path, f.file as Blob]));
      let inspection: ModelInspection;
      try {
        inspection = await this.#app.models.inspect({ kind: "files", key: folder.name, files });
      } catch (error) {
        this.folderProblems = [`${folder.name}: ${errorText(error)}`];
        return;
      }
      const unusable = inspectionProblems(inspection);
      if (unusable.length) {
        this.folderProblems = unusable.map((p) => `${folder.name}: ${p}`);
        return;
      }
      try {
        await this.#app.models.addFolder(
          folder.name,
          folder.files.map((f) => ({ path: f.path, file: f.file })),
        );
      } catch (error) {
        this.folderProblems = [`${folder.name} could not be kept in this browser: ${errorText(error)}`];
        return;
      }
      if (folder.outside)
        this.folderNote = `${folder.outside} file${folder.outside === 1 ? "" : "s"} outside the model folder were left out`;
    } finally {
      this.adding = false;
    }
    const entry = this.entries.find((e) => e.name === `files:${folder.name}`);
    if (entry) await this.load(entry);
  }

  async removeFolder(entry: ModelEntry): Promise<void> {
    this.#fail(entry.name, undefined);
    try {
      await this.#app.models.removeFolder(entry.title);
    } catch (error) {
      this.#fail(entry.name, errorText(error));
    }
  }

  /** Loads the hub id typed in (it is then listed, its files kept in this browser). */
  async loadHub(backend: BackendKind): Promise<void> {
    const id = this.hubId.trim();
    if (!isHubId(id)) {
      this.hubProblem = `'${id}' is not a hub id: expected owner/name, e.g. Xenova/tiny-random-LlamaForCausalLM`;
      return;
    }
    this.hubProblem = undefined;
    const name = `hub:${id}`;
    this.backends = { ...this.backends, [name]: backend };
    this.#fail(name, undefined);
    try {
      await this.#app.models.load(
        { kind: "hub", id },
        {
          ...(backend === "transformers" ? { backend } : {}),
          ...(this.want.length ? { want: [...this.want] } : {}),
        },
      );
      this.hubId = "";
    } catch (error) {
      if (!/superseded/.test(errorText(error))) this.hubProblem = errorText(error);
    }
  }

  async forgetHub(entry: ModelEntry): Promise<void> {
    try {
      await this.#app.models.forgetHubModel(entry.title);
    } catch (error) {
      this.#fail(entry.name, errorText(error));
    }
  }

  /** The bundled models' sizes before any load: a HEAD request per file (served by the app itself). */
  async #measureBundled(): Promise<void> {
    const sizes: Record<string, number> = {};
    await Promise.all(
      listSpecs().map(async (spec) => {
        const base = `${import.meta.env.BASE_URL}${spec.source}/`;
        const lengths = await Promise.all(
          spec.files.map(async (file) => {
            const response = await fetch(`${base}${file}`, { method: "HEAD" }).catch(() => undefined);
            return Number(response?.ok ? (response.headers.get("Content-Length") ?? NaN) : NaN);
          }),
        );
        if (lengths.every(Number.isFinite)) sizes[spec.key] = lengths.reduce((a, b) => a + b, 0);
      }),
    );
    this.bundledBytes = sizes;
  }
}
