"""NumPy side of `npm run bench:stats`: the same paired bootstrap, vectorised.

Reads {"diffs": [...], "clusters": [...], "replicates": R, "repeats": k} as JSON on stdin,
times each variant `repeats` times in-process after a warm-up and prints
{"unclustered_ms": [times], "clustered_ms": [times], "numpy": version, ...} as JSON on stdout.
"""
import json
import sys
import time

import numpy as np
from scipy import stats


def bootstrap(diffs, replicates, confidence, rng):
    n = diffs.shape[0]
    idx = rng.integers(0, n, size=(replicates, n))
    means = diffs[idx].mean(axis=1)
    return finish(means, replicates, confidence, n)


def cluster_bootstrap(diffs, clusters, replicates, confidence, rng):
    _, inverse = np.unique(clusters, return_inverse=True)
    sums = np.bincount(inverse, weights=diffs)
    sizes = np.bincount(inverse).astype(np.float64)
    g = sums.shape[0]
    idx = rng.integers(0, g, size=(replicates, g))
    means = sums[idx].sum(axis=1) / sizes[idx].sum(axis=1)
    return finish(means, replicates, confidence, g)


def finish(means, replicates, confidence, units):
    # the same expanded-percentile levels as pairedBootstrap (Hesterberg 2015)
    tail = (1 - confidence) / 2
    if units >= 2:
        tail = stats.norm.cdf(-np.sqrt(units / (units - 1)) * stats.t.ppf(1 - tail, units - 1))
    lo, hi = np.quantile(means, [tail, 1 - tail])
    le = int((means <= 0).sum())
    ge = int((means >= 0).sum())
    p = min(1.0, 2 * min(le + 1, ge + 1) / (replicates + 1))
    return float(lo), float(hi), p


def timed(fn, repeats):
    fn()  # warm-up: imports, allocator, caches
    times = []
    out = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t0) * 1000)
    return times, out


def main():
    spec = json.load(sys.stdin)
    diffs = np.asarray(spec["diffs"], dtype=np.float64)
    clusters = np.asarray(spec["clusters"], dtype=np.int64)
    R = int(spec["replicates"])
    k = int(spec["repeats"])
    rng = np.random.default_rng(0)
    t_plain, r_plain = timed(lambda: bootstrap(diffs, R, 0.95, rng), k)
    t_clust, r_clust = timed(lambda: cluster_bootstrap(diffs, clusters, R, 0.95, rng), k)
    json.dump(
        {
            "numpy": np.__version__,
            "unclustered_ms": t_plain,
            "clustered_ms": t_clust,
            "unclustered": r_plain,
            "clustered": r_clust,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
