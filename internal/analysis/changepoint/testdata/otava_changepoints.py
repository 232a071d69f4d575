"""Runs Apache Otava's change-point detection on series given as JSON.

Input (stdin):  {"series": [[float, ...], ...], "max_pvalue": float, "seed": int}
Output (stdout): {"otava_version": str, "edivisive": [[index, ...], ...]}

"edivisive" is otava.analysis.compute_change_points_orig: Otava's
implementation of Matteson & James's E-Divisive with a permutation test
(100 permutations, numpy's generator seeded with "seed"). Otava's default,
compute_change_points, is the sliding-window split and t-test merge of
Fleming et al. (2023), a different test, so it is not the reference here. An
index is the first point after the change, as in plateau.
"""
import json
import sys
from importlib.metadata import version

from otava.analysis import compute_change_points_orig


def main():
    req = json.load(sys.stdin)
    p = req["max_pvalue"]
    seed = req["seed"]
    out = {"otava_version": version("apache-otava"), "edivisive": []}
    for s in req["series"]:
        cps, _ = compute_change_points_orig(list(s), max_pvalue=p, seed=seed)
        out["edivisive"].append(sorted(int(c.index) for c in cps))
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
