/**
 * What the service worker and the page say to each other. The worker announces its install on a
 * BroadcastChannel (every tab hears it, controlled or not); the page asks the worker that controls it for
 * its build through a MessageChannel, tells a waiting worker to take over, and asks for lazy files it uses.
 */

/** The BroadcastChannel the service worker reports its install on. */
export const OFFLINE_CHANNEL = "evalrx-offline";

/** Broadcast by the service worker of build `version` while it installs and activates. */
export type OfflineBroadcast =
  | { readonly type: "progress"; readonly version: string; readonly done: number; readonly total: number }
  | { readonly type: "installed"; readonly version: string }
  | { readonly type: "install-failed"; readonly version: string; readonly message: string }
  | { readonly type: "activated"; readonly version: string };

/** Sent by the page to a service worker. */
export type OfflineRequest =
  /** "Which build are you?" — answered on the message's port with a `BuildAnswer`. */
  | { readonly type: "build" }
  /** The user chose to reload into the new version: the waiting worker takes over now. */
  | { readonly type: "skip-waiting" }
  /**
   * "Keep these files of your build now": lazy ones the page uses (ONNX Runtime's WebGPU build once models
   * run on WebGPU), downloaded and kept as if first used through the worker, so they work offline too.
   * Answered on the message's port with a `KeepAnswer`.
   */
  | { readonly type: "keep"; readonly urls: readonly string[] };

/** A service worker's answer to `{ type: "keep" }`: the URLs now kept, and why each other one is not. */
export interface KeepAnswer {
  readonly kept: readonly string[];
  readonly failed: readonly { readonly url: string; readonly message: string }[];
}

/** A service worker's answer to `{ type: "build" }`. */
export interface BuildAnswer {
  readonly version: string;
  readonly appVersion: string;
}
