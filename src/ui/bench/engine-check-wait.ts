/**
 * Waits on the Settings page for the first visit's engine check (WASM against WebGPU, measured once per browser)
 * to give its choice or say why it could not measure, so that it does not run inside a timed measurement after.
 */
import type { Page } from "playwright-core";

/**
 * Opens `#/settings` of the app at `url` and waits, polling once a second, until the engine check shows its choice
 * ("measured: WASM") or its failure ("could not be checked: …", the models then run on WASM). Throws, quoting
 * the panel, when it shows neither within `timeoutMs`.
 *
 * @example await waitForEngineCheck(page, harness.url, 300_000) // "measured: WASM"
 */
export async function waitForEngineCheck(page: Page, url: string, timeoutMs: number): Promise<string> {
  if (!(timeoutMs > 0)) throw new Error(`waitForEngineCheck: timeoutMs must be a positive number (got ${timeoutMs})`);
  await page.goto(`${url}#/settings`);
  await page.getByTestId("engine-check").waitFor({ timeout: 60_000 });
  try {
    const handle = await page.waitForFunction(
      () => {
        const panel = document.querySelector('[data-testid="engine-check"]');
        const device = panel?.querySelector('[data-testid="engine-check-device"]')?.textContent?.trim();
        if (device) return `measured: ${device}`;
        const error = panel?.querySelector(".error")?.textContent?.trim();
        return error ? `failed: ${error.replace(/\s+/g, " ")}` : false;
      },
      undefined,
      { polling: 1000, timeout: timeoutMs },
    );
    return (await handle.jsonValue()) as string;
  } catch (error) {
    const shown = (
      await page
        .getByTestId("engine-check")
        .textContent()
        .catch(() => null)
    )?.replace(/\s+/g, " ");
    throw new Error(
      `the engine check showed no choice and no failure within ${(timeoutMs / 1000).toFixed(0)} s; the panel said: "${shown?.trim() ?? "(nothing)"}" (${error instanceof Error ? error.message.split("\n")[0] : String(error)})`,
      { cause: error },
    );
  }
}
