/**
 * The app's URL grammar, as data: every screen is a `Route`, `parseRoute`
 * reads one from `location.hash`, and `href` writes one back. Hash routing
 * keeps the app servable from any static host, and share links (which carry
 * their payload in the fragment) reuse the same grammar.
 *
 *   #/                          library (home)
 *   #/models                    models
 *   #/datasets[/<id>]           datasets, or one dataset's cases
 *   #/runs[/<id>[/<case>]]      runs, one run, or one case of a run
 *   #/compare?baseline=A&candidate=B[&tolerance=0.03]
 *   #/report[/<id>]             open a report.json, or read a stored report
 *   #/investigate[/<id>]        start an investigation (M1→M5), or follow one
 *   #/playground                one question to one model
 *   #/settings                  engine, defaults, storage
 *   #/pair[?companion=…&token=…]   pair with a local evalrx companion (the link it prints), or see it
 *   #/share[/<payload>]         a shared report or run carried in the link itself (read-only), or open a bundle
 *
 * Path segments and query values are URI-encoded, so ids may hold any character.
 */

/** Every screen of the app. */
export type Route =
  | { readonly page: "library" }
  | { readonly page: "models" }
  | { readonly page: "datasets"; readonly id?: string }
  | { readonly page: "runs"; readonly id?: string; readonly caseId?: string }
  | {
      readonly page: "compare";
      readonly baseline?: string;
      readonly candidate?: string;
      readonly tolerance?: number;
    }
  | { readonly page: "investigate"; readonly id?: string }
  | { readonly page: "report"; readonly id?: string }
  | { readonly page: "playground"; readonly dataset?: string; readonly caseId?: string }
  | { readonly page: "settings" }
  | { readonly page: "pair"; readonly companion?: string; readonly token?: string }
  | { readonly page: "share"; readonly payload?: string }
  | { readonly page: "not-found"; readonly path: string };

export type PageName = Route["page"];

/** The routes a person can open, with what each is for (the not-found page and the nav list these). */
export const ROUTES: readonly {
  readonly page: Exclude<PageName, "not-found">;
  readonly pattern: string;
  readonly title: string;
  readonly about: string;
}[] = [
  { page: "library", pattern: "#/", title: "Library", about: "what is stored: models, datasets and recent runs" },
  { page: "models", pattern: "#/models", title: "Models", about: "bundled models, your own folder, or a hub id" },
  {
    page: "datasets",
    pattern: "#/datasets[/<id>]",
    title: "Datasets",
    about: "import files, check their rows, browse cases",
  },
  { page: "runs", pattern: "#/runs[/<id>]", title: "Runs", about: "start an eval, follow it, read its results" },
  {
    page: "compare",
    pattern: "#/compare?baseline=<id>&candidate=<id>",
    title: "Compare",
    about: "two runs side by side, gated like CI",
  },
  {
    page: "investigate",
    pattern: "#/investigate[/<id>]",
    title: "Investigate",
    about: "why the model fails: the loop M1→M5, live",
  },
  {
    page: "report",
    pattern: "#/report[/<id>]",
    title: "Reports",
    about: "open a report.json from the CLI, or read a stored investigation's report",
  },
  {
    page: "share",
    pattern: "#/share[/<payload>]",
    title: "Shared",
    about: "a report or run someone sent you: open their link, or their bundle file",
  },
  {
    page: "playground",
    pattern: "#/playground",
    title: "Playground",
    about: "one question, one answer, where the model looked",
  },
  { page: "settings", pattern: "#/settings", title: "Settings", about: "engine (WebGPU or WASM), defaults, storage" },
  {
    page: "pair",
    pattern: "#/pair[?companion=<url>&token=<token>]",
    title: "Companion",
    about: "pair with evalrx companion: evals on this machine's CPU, written back here",
  },
];

const decode = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
};

/**
 * Which screen does this URL fragment name? Unknown paths, extra segments and
 * undecodable ones are `not-found` (with the path, so the page can say what
 * was asked for).
 *
 * @example parseRoute("#/runs/pope-20261201T101500Z") // { page: "runs", id: "pope-20261201T101500Z" }
 * @example parseRoute("#/compare?baseline=a&candidate=b&tolerance=0.03") // { page: "compare", baseline: "a", candidate: "b", tolerance: 0.03 }
 */
export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#/, "");
  const [pathPart = "", queryPart = ""] = splitOnce(raw, "?");
  const path = pathPart === "" ? "/" : pathPart;
  const notFound: Route = { page: "not-found", path: raw || "/" };
  if (!path.startsWith("/")) return notFound;
  const segments = path.slice(1).split("/");
  if (segments.at(-1) === "" && segments.length > 1) segments.pop(); // a trailing slash names the same page
  const parts = segments.map(decode);
  if (parts.some((p) => p === undefined)) return notFound;
  const [head = "", ...rest] = parts as string[];
  const query = new URLSearchParams(queryPart);
  const one = (name: string) => {
    const v = query.get(name);
    return v === null || v === "" ? undefined : v;
  };
  const none = rest.length === 0;
  switch (head) {
    case "":
      return none ? { page: "library" } : notFound;
    case "models":
      return none ? { page: "models" } : notFound;
    case "settings":
      return none ? { page: "settings" } : notFound;
    case "pair":
      if (!none) return notFound;
      return {
        page: "pair",
        ...(one("companion") !== undefined ? { companion: one("companion") } : {}),
        ...(one("token") !== undefined ? { token: one("token") } : {}),
      };
    case "datasets":
      if (rest.length > 1 || rest[0] === "") return notFound;
      return rest[0] === undefined ? { page: "datasets" } : { page: "datasets", id: rest[0] };
    case "runs":
      if (rest.length > 2 || rest.includes("")) return notFound;
      return {
        page: "runs",
        ...(rest[0] !== undefined ? { id: rest[0] } : {}),
        ...(rest[1] !== undefined ? { caseId: rest[1] } : {}),
      };
    case "compare": {
      if (!none) return notFound;
      const tolerance = one("tolerance");
      const t = tolerance === undefined ? undefined : Number(tolerance);
      return {
        page: "compare",
        ...(one("baseline") !== undefined ? { baseline: one("baseline") } : {}),
        ...(one("candidate") !== undefined ? { candidate: one("candidate") } : {}),
        ...(t !== undefined && Number.isFinite(t) && t >= 0 && t < 1 ? { tolerance: t } : {}),
      };
    }
    case "investigate":
      if (rest.length > 1 || rest[0] === "") return notFound;
      return rest[0] === undefined ? { page: "investigate" } : { page: "investigate", id: rest[0] };
    case "report":
      if (rest.length > 1 || rest[0] === "") return notFound;
      return rest[0] === undefined ? { page: "report" } : { page: "report", id: rest[0] };
    case "share":
      // The payload is the link's data (base64url), checked by the share page, not here.
      if (rest.length > 1 || rest[0] === "") return notFound;
      return rest[0] === undefined ? { page: "share" } : { page: "share", payload: rest[0] };
    case "playground":
      if (!none) return notFound;
      return {
        page: "playground",
        ...(one("dataset") !== undefined ? { dataset: one("dataset") } : {}),
        ...(one("case") !== undefined ? { caseId: one("case") } : {}),
      };
    default:
      return notFound;
  }
}

/**
 * The URL fragment of a route: `parseRoute(href(r))` gives `r` back for every
 * route but `not-found`, whose href is its path as given.
 *
 * @example href({ page: "runs", id: "a/b" }) // "#/runs/a%2Fb"
 */
export function href(route: Route): string {
  const e = encodeURIComponent;
  const query = (pairs: Record<string, string | number | undefined>) => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(pairs)) if (v !== undefined) q.set(k, String(v));
    const s = q.toString();
    return s ? `?${s}` : "";
  };
  switch (route.page) {
    case "library":
      return "#/";
    case "models":
    case "settings":
      return `#/${route.page}`;
    case "datasets":
      return route.id === undefined ? "#/datasets" : `#/datasets/${e(route.id)}`;
    case "runs":
      if (route.id === undefined) return "#/runs";
      return `#/runs/${e(route.id)}${route.caseId === undefined ? "" : `/${e(route.caseId)}`}`;
    case "compare":
      return `#/compare${query({ baseline: route.baseline, candidate: route.candidate, tolerance: route.tolerance })}`;
    case "investigate":
      return route.id === undefined ? "#/investigate" : `#/investigate/${e(route.id)}`;
    case "report":
      return route.id === undefined ? "#/report" : `#/report/${e(route.id)}`;
    case "playground":
      return `#/playground${query({ dataset: route.dataset, case: route.caseId })}`;
    case "pair":
      return `#/pair${query({ companion: route.companion, token: route.token })}`;
    case "share":
      return route.payload === undefined ? "#/share" : `#/share/${e(route.payload)}`;
    case "not-found":
      return `#${route.path}`;
  }
}

function splitOnce(s: string, separator: string): [string, string] {
  const at = s.indexOf(separator);
  return at < 0 ? [s, ""] : [s.slice(0, at), s.slice(at + 1)];
}
