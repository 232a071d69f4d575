#!/usr/bin/env python3
"""CPU time per request of two builds of a Go benchmark, interleaved.

Wall time per request is at the mercy of whatever else the machine runs;
the CPU time the benchmark process used (rusage of the child: client and
in-process server together) is steadier. Build the test binaries first:

    go test -c -o /tmp/httpc-before.test ./internal/engine/httpc/   # old commit
    go test -c -o /tmp/httpc-after.test ./internal/engine/httpc/    # new commit
    bench/cpu_per_request.py --dir internal/engine/httpc \\
        /tmp/httpc-before.test /tmp/httpc-after.test 'ClosedLoop50/httpc' 100000 8

Prints the median, min and max µs of CPU per request for each binary.
"""
import argparse
import resource
import statistics
import subprocess


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default=".", help="package directory the binaries run in")
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("bench", help="-test.bench pattern")
    ap.add_argument("n", type=int, help="requests (iterations) per run")
    ap.add_argument("rounds", type=int, help="interleaved runs of each binary")
    a = ap.parse_args()
    res = {a.before: [], a.after: []}
    for _ in range(a.rounds):
        for b in res:
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([b, "-test.run", "^$", "-test.bench", a.bench, "-test.benchtime", f"{a.n}x"],
                           cwd=a.dir, stdout=subprocess.DEVNULL, check=True)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
            res[b].append(cpu / a.n * 1e6)
    for b, v in res.items():
        print(f"{a.bench} {b}: CPU µs/request median {statistics.median(v):.2f} "
              f"min {min(v):.2f} max {max(v):.2f} (n={len(v)})")


if __name__ == "__main__":
    main()
