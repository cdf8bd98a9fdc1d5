import { href, parseRoute, type Route } from "./routes.ts";

/**
 * The current route as state, kept in step with `location.hash`. Navigation
 * is a hash change, so the browser's back and forward buttons and a reload
 * all land on the same screen.
 */
export class Router {
  route = $state.raw<Route>(parseRoute(location.hash));
  readonly #onHash = () => {
    this.route = parseRoute(location.hash);
  };

  constructor() {
    addEventListener("hashchange", this.#onHash);
  }

  /** Opens a route (a new history entry). */
  go(route: Route): void {
    const next = href(route);
    if (location.hash === next || (next === "#/" && location.hash === "")) this.route = route;
    else location.hash = next;
  }

  /** Changes the URL to `route` without a new history entry (for state kept in the URL, like a tolerance). */
  replace(route: Route): void {
    history.replaceState(history.state, "", href(route));
    this.route = route;
  }

  dispose(): void {
    removeEventListener("hashchange", this.#onHash);
  }
}
