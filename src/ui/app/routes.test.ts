import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { href, parseRoute, ROUTES, type Route } from "./routes.ts";

describe("parseRoute", () => {
  it("reads every screen", () => {
    expect(parseRoute("")).toEqual({ page: "library" });
    expect(parseRoute("#/")).toEqual({ page: "library" });
    expect(parseRoute("#/models")).toEqual({ page: "models" });
    expect(parseRoute("#/models/")).toEqual({ page: "models" });
    expect(parseRoute("#/datasets")).toEqual({ page: "datasets" });
    expect(parseRoute("#/datasets/pope")).toEqual({ page: "datasets", id: "pope" });
    expect(parseRoute("#/runs")).toEqual({ page: "runs" });
    expect(parseRoute("#/runs/r1")).toEqual({ page: "runs", id: "r1" });
    expect(parseRoute("#/runs/r1/case%201")).toEqual({ page: "runs", id: "r1", caseId: "case 1" });
    expect(parseRoute("#/compare?baseline=a&candidate=b&tolerance=0.03")).toEqual({
      page: "compare",
      baseline: "a",
      candidate: "b",
      tolerance: 0.03,
    });
    expect(parseRoute("#/playground?dataset=pope&case=c1")).toEqual({
      page: "playground",
      dataset: "pope",
      caseId: "c1",
    });
    expect(parseRoute("#/investigate")).toEqual({ page: "investigate" });
    expect(parseRoute("#/investigate/inv%2F1")).toEqual({ page: "investigate", id: "inv/1" });
    expect(parseRoute("#/settings")).toEqual({ page: "settings" });
    expect(parseRoute("#/share")).toEqual({ page: "share" });
    expect(parseRoute("#/share/1.rVbb-_x")).toEqual({ page: "share", payload: "1.rVbb-_x" });
    expect(parseRoute("#/report")).toEqual({ page: "report" });
    expect(parseRoute("#/report/investigate-0c62da0605d0-s1")).toEqual({
      page: "report",
      id: "investigate-0c62da0605d0-s1",
    });
  });

  it("names what it could not read", () => {
    expect(parseRoute("#/nope")).toEqual({ page: "not-found", path: "/nope" });
    expect(parseRoute("#/models/extra")).toEqual({ page: "not-found", path: "/models/extra" });
    expect(parseRoute("#/runs/a/b/c")).toEqual({ page: "not-found", path: "/runs/a/b/c" });
    expect(parseRoute("#/runs/%E0%A4%A")).toEqual({ page: "not-found", path: "/runs/%E0%A4%A" });
    expect(parseRoute("#models")).toEqual({ page: "not-found", path: "models" });
    expect(parseRoute("#/report/a/b")).toEqual({ page: "not-found", path: "/report/a/b" });
    expect(parseRoute("#/investigate/a/b")).toEqual({ page: "not-found", path: "/investigate/a/b" });
    expect(parseRoute("#/share/1.a/b")).toEqual({ page: "not-found", path: "/share/1.a/b" });
  });

  it("drops a tolerance that is not a share in [0, 1)", () => {
    expect(parseRoute("#/compare?tolerance=abc")).toEqual({ page: "compare" });
    expect(parseRoute("#/compare?tolerance=2")).toEqual({ page: "compare" });
  });
});

describe("href", () => {
  const id = fc.string({ minLength: 1, maxLength: 20 });
  const route: fc.Arbitrary<Route> = fc.oneof(
    fc.constant<Route>({ page: "library" }),
    fc.constant<Route>({ page: "models" }),
    fc.constant<Route>({ page: "settings" }),
    fc.record({ page: fc.constant("datasets" as const), id }, { requiredKeys: ["page"] }),
    fc.record({ page: fc.constant("runs" as const), id }, { requiredKeys: ["page"] }),
    fc.record({ page: fc.constant("runs" as const), id, caseId: id }),
    fc.record(
      {
        page: fc.constant("compare" as const),
        baseline: id,
        candidate: id,
        tolerance: fc.double({ min: 0, max: 0.99, noNaN: true }),
      },
      { requiredKeys: ["page"] },
    ),
    fc.record({ page: fc.constant("investigate" as const), id }, { requiredKeys: ["page"] }),
    fc.record({ page: fc.constant("playground" as const), dataset: id, caseId: id }, { requiredKeys: ["page"] }),
    fc.record({ page: fc.constant("report" as const), id }, { requiredKeys: ["page"] }),
    fc.record({ page: fc.constant("share" as const), payload: id }, { requiredKeys: ["page"] }),
  );

  it("writes what parseRoute reads back, for any id", () => {
    fc.assert(
      fc.property(route, (r) => {
        expect(parseRoute(href(r))).toEqual(r);
      }),
    );
  });

  it("encodes ids that hold slashes, spaces and query characters", () => {
    expect(href({ page: "runs", id: "a/b?c" })).toBe("#/runs/a%2Fb%3Fc");
    expect(href({ page: "report", id: "r 1/x" })).toBe("#/report/r%201%2Fx");
    expect(href({ page: "compare", baseline: "a&b", candidate: "c" })).toBe("#/compare?baseline=a%26b&candidate=c");
  });

  it("every listed route opens its own page", () => {
    for (const r of ROUTES) expect(parseRoute(r.pattern.replace(/[[?].*$/, "")).page).toBe(r.page);
  });
});
