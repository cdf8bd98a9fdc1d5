/**
 * What a person reads when a page's code (a lazily loaded chunk) could not be
 * loaded. The usual causes are two: the app was updated since this tab opened
 * (a static host that replaced its files no longer has this build's chunk),
 * or the network is off and this build is not kept offline yet. Either way a
 * reload is the way out: it loads the current build whole, so it never mixes
 * an old page with new code.
 *
 * @example
 * pageLoadError("Reports", new TypeError("Failed to fetch dynamically imported module: http://localhost:4173/assets/ReportPage-x1.js"))
 * // → "The Reports page's code could not be loaded (assets/ReportPage-x1.js: Failed to fetch dynamically imported module). …"
 */
export function pageLoadError(title: string, error: unknown): string {
  if (typeof title !== "string" || !title.trim())
    throw new TypeError(`pageLoadError(): title must name the page, got ${JSON.stringify(title)}`);
  const message = error instanceof Error ? error.message : String(error ?? "no reason given");
  // Browsers name the chunk in the message (Chromium: "…module: <url>"; Firefox: "error loading … <url>").
  const url = /\bhttps?:\/\/\S+?\.m?js\b/.exec(message)?.[0];
  let why = message.trim() || "no reason given";
  if (url) {
    const path = new URL(url).pathname.replace(/^\/+/, "");
    const rest = message
      .replace(url, "")
      .replace(/[\s:]+$/, "")
      .trim();
    why = rest ? `${path}: ${rest}` : path;
  }
  return (
    `The ${title} page's code could not be loaded (${why}). ` +
    "EvalRx may have been updated since this tab was opened, or the network is off and this version is not kept " +
    "for offline use yet. Reload the page to load the current version; the rest of the app is unaffected."
  );
}
