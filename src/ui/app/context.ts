import { getContext, setContext } from "svelte";
import type { ImportService } from "./imports.svelte.ts";
import type { JobService } from "./jobs.svelte.ts";
import type { ModelService } from "./model.svelte.ts";
import type { Router } from "./router.svelte.ts";
import type { Settings } from "./settings.svelte.ts";
import type { StatsService } from "./stats.svelte.ts";
import type { StoreService } from "./store.svelte.ts";

/**
 * The app's long-lived services, one instance each, created by `App.svelte`
 * and handed to every page through one typed context: pages own no store
 * connection and no worker of their own.
 */
export interface AppServices {
  readonly router: Router;
  readonly settings: Settings;
  readonly store: StoreService;
  readonly models: ModelService;
  readonly jobs: JobService;
  readonly stats: StatsService;
  /** Dataset imports and the dataset view's cases, in the data worker. */
  readonly imports: ImportService;
}

const KEY = Symbol("evalrx.app");

/** Makes the services available to every component below the caller (App, or a test harness). */
export function provideApp(services: AppServices): AppServices {
  return setContext(KEY, services);
}

/** The app's services; throws when called outside a component tree that provided them. */
export function useApp(): AppServices {
  const services = getContext<AppServices | undefined>(KEY);
  if (!services) throw new Error("useApp() was called outside <App> (or a harness that called provideApp)");
  return services;
}
