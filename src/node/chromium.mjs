// The system Chromium the browser tests drive. Plain JS so both the Vite config
// and the `npm test` pre-check can load it before any TypeScript loader runs.
import { existsSync } from "node:fs";

/**
 * `CHROMIUM_PATH` if set, else Debian's `/usr/bin/chromium`. Tests never
 * download a browser of their own.
 * @returns {string | undefined}
 */
export function chromiumPath() {
  const candidates = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"];
  return candidates.find((path) => !!path && existsSync(path));
}

/**
 * Flags for headless Chromium here: no sandbox (tests run as root), WebGPU on
 * (SwiftShader when there is no GPU), and none of the background traffic
 * Chromium starts on its own.
 */
export const chromiumArgs = [
  "--no-sandbox",
  "--enable-unsafe-webgpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-default-apps",
  "--no-first-run",
  "--disable-quic",
];
