import { describe, expect, it } from "vitest";
import { heldOutClusters } from "./layer-train.ts";

describe("heldOutClusters", () => {
  it("holds out a seeded share of whole clusters, never splitting one, and nothing under 5 clusters", () => {
    const clusters = Array.from({ length: 60 }, (_, i) => `scene-${Math.floor(i / 6)}`);
    const a = heldOutClusters(clusters, 0.2, 1);
    expect(a).toEqual(heldOutClusters(clusters, 0.2, 1));
    expect(a.held).toHaveLength(12); // 2 of 10 scenes, 6 cases each
    expect([...a.train, ...a.held].sort((x, y) => x - y)).toEqual(clusters.map((_, i) => i));
    const heldScenes = new Set(a.held.map((i) => clusters[i]));
    expect(a.train.some((i) => heldScenes.has(clusters[i]))).toBe(false);
    expect(heldOutClusters(clusters, 0.2, 2).held).not.toEqual(a.held);
    expect(heldOutClusters(["s1", "s1", "s2", "s3", "s4"], 0.5, 1)).toEqual({ train: [0, 1, 2, 3, 4], held: [] });
    expect(() => heldOutClusters(clusters, 1, 1)).toThrow("share must be in [0, 1), got 1");
  });
});
