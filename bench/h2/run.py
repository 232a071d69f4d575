#!/usr/bin/env python3
"""HTTP/2 peer benchmark: plateau against h2load (Debian nghttp2-client).

nginx (Debian, one worker, `return 200 'ok'`, HTTP/2 over TLS and h2c) runs pinned to
CPU 1, the generator pinned to CPU 0 (Go sizes GOMAXPROCS to the affinity: 1). Both
generators keep 50 streams in flight on one connection for the same duration:

  plateau: 50 users, http.version "2", connections: shared, max_concurrent_streams 50
  h2load:  -c1 -m50 -t1 -D <duration>

Every repetition runs both tools one after the other (order alternating), so their
figures come from the same minutes of a machine that may be shared. Reported per tool:
req/s and CPU per request (user+system time of the whole generator process / requests),
medians of the repetitions, and plateau / h2load per repetition.

  bench/h2/run.py [--reps 3] [--duration 10] [--modes tls,h2c] [--strace] [--plateau BIN]

--plateau defaults to $PLATEAU_BIN, else a build of this repository (go build); it may
name several builds to compare in the same run, `old=/tmp/plateau-old,new=/tmp/plateau`
(each is compared with h2load; the first is the one the --strace runs use). --strace
adds one short run of each tool under `strace -c -f` and reports system calls per request.
Loopback only; nothing is left running (nginx and its files live in a temporary folder).
Needs nginx, h2load, openssl, taskset (scripts/install-test-deps.sh installs them).
"""
import argparse
import json
import os
import re
import shutil
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from benchlib import GEN_CPU, HOST, SERVER_CPU, Nginx, build_plateau, pin, require, run_measured, run_pinned, scratch  # noqa: E402

SERVERS = """  server {{
    listen {host}:{tls} ssl http2;
    ssl_certificate {dir}/cert.pem;
    ssl_certificate_key {dir}/key.pem;
    location / {{ default_type text/plain; return 200 'ok'; }}
  }}
  server {{
    listen {host}:{h2c} http2;
    location / {{ default_type text/plain; return 200 'ok'; }}
  }}"""


def start_nginx(work: Path):
    return Nginx(work, ("tls", "h2c"), lambda d, ports: SERVERS.format(host=HOST, dir=d, **ports), tls=True)


def url_of(nginx, mode):
    return f"https://{HOST}:{nginx.ports['tls']}/" if mode == "tls" else f"http://{HOST}:{nginx.ports['h2c']}/"


def plateau_cmd(bin_, url, duration, work: Path):
    plan = work / "plan.yaml"
    plan.write_text(
        f"name: h2-bench\ntarget: {url.rstrip('/')}\n"
        "http:\n  version: \"2\"\n  insecure: true\n  connections: shared\n  max_concurrent_streams: 50\n"
        "workloads:\n  w:\n    scenario:\n      - request: {name: get, url: /}\n"
        f"    load: {{users: 50, duration: {duration}s}}\n")
    out = work / "run"
    shutil.rmtree(out, ignore_errors=True)

    def parse(text):
        j = json.loads((out / "summary.json").read_text())
        tot = next(l for l in j["labels"] if l["label"] == "TOTAL")
        if tot["errors"]:
            raise SystemExit(f"plateau: {tot['errors']} errors of {tot['samples']}")
        return tot["samples"], tot["throughput_rps"]
    return [bin_, "run", str(plan), "-o", str(out), "-q"], parse


def h2load_cmd(url, duration):
    def parse(text):
        m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored",
                      text)
        r = re.search(r"finished in ([0-9.]+)(m?s), ([0-9.]+) req/s", text)
        if not m or not r:
            raise SystemExit(f"h2load output not understood:\n{text}")
        if int(m.group(5)) or int(m.group(6)):
            raise SystemExit(f"h2load: failed or errored requests:\n{text}")
        return int(m.group(4)), float(r.group(3))
    return ["h2load", "-c1", "-m50", "-t1", "-D", str(duration), url], parse


def measure(tool, argv, parse, timeout):
    out, rc, cpu, wall = run_pinned(argv, timeout)
    # plateau exits 3 ("invalid") when its own CPU was saturated, which a
    # throughput benchmark on one core does by design; the numbers stand.
    if rc not in ((0, 3) if tool.startswith("plateau") else (0,)):
        raise SystemExit(f"{tool} exited with {rc}:\n{out}")
    reqs, rps = parse(out)
    return {"tool": tool, "requests": reqs, "rps": rps, "cpu_s": cpu, "cpu_us_per_req": cpu / reqs * 1e6,
            "wall_s": wall}


def strace_counts(tool, argv, parse, work: Path, timeout):
    """System calls per request of the generator (all its threads)."""
    f = work / f"strace-{tool}.txt"
    out, rc, _ = run_measured(["strace", "-c", "-f", "-o", str(f)] + pin(argv, GEN_CPU), timeout)
    if rc != 0:
        raise SystemExit(f"strace {tool} exited with {rc}:\n{out}")
    reqs, _ = parse(out)
    calls = {}
    for line in f.read_text().splitlines():
        p = line.split()
        if len(p) >= 5 and p[0][0].isdigit() and p[-1] not in ("total",):
            n = int(p[3])
            calls[p[-1]] = n
    total = sum(calls.values())
    top = sorted(calls.items(), key=lambda kv: -kv[1])[:5]
    return {"tool": tool, "requests": reqs, "syscalls_per_req": total / reqs,
            "top": ", ".join(f"{k} {v / reqs:.2f}" for k, v in top)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=int, default=10, help="seconds per run")
    ap.add_argument("--modes", default="tls,h2c")
    ap.add_argument("--strace", action="store_true", help="also count system calls per request (short runs)")
    ap.add_argument("--plateau", default=os.environ.get("PLATEAU_BIN"))
    a = ap.parse_args()
    require("nginx", "h2load", "openssl", "taskset")
    with scratch("h2bench-") as work:
        builds = {}
        for i, spec in enumerate((a.plateau or build_plateau(work)).split(",")):
            name, _, path = spec.rpartition("=")
            builds["plateau" + (f" {name}" if name else "")] = path
        bin_ = next(iter(builds.values()))
        with start_nginx(work) as nginx:
            modes = a.modes.split(",")
            rows = {m: [] for m in modes}
            tools = list(builds) + ["h2load"]
            for rep in range(a.reps):
                for m in modes:
                    url = url_of(nginx, m)
                    order = tools if rep % 2 == 0 else tools[::-1]
                    got = {}
                    for tool in order:
                        argv, parse = (plateau_cmd(builds[tool], url, a.duration, work) if tool in builds
                                       else h2load_cmd(url, a.duration))
                        got[tool] = measure(tool, argv, parse, a.duration * 6 + 60)
                        print(f"rep {rep + 1} {m:4} {tool:12} {got[tool]['rps']:10.0f} req/s "
                              f"{got[tool]['cpu_us_per_req']:6.2f} µs CPU/req", file=sys.stderr, flush=True)
                    for b in builds:
                        got[b]["ratio"] = got[b]["rps"] / got["h2load"]["rps"]
                    rows[m].append(got)
            load = os.getloadavg()
            print(f"\nHTTP/2, 50 streams on one connection, nginx on CPU {SERVER_CPU}, generator on CPU {GEN_CPU}, "
                  f"{a.duration} s per run, {a.reps} repetitions (median, min–max); load average after: "
                  f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f}\n")
            print("| mode | tool | req/s | CPU µs per request | plateau / h2load |")
            print("|---|---|---|---|---|")
            for m in modes:
                for tool in tools:
                    rps = [r[tool]["rps"] for r in rows[m]]
                    cpu = [r[tool]["cpu_us_per_req"] for r in rows[m]]
                    ratio = [r[tool].get("ratio", 0) for r in rows[m]]
                    rcol = (f"**{statistics.median(ratio):.2f}×** ({min(ratio):.2f}–{max(ratio):.2f})"
                            if tool in builds else "")
                    print(f"| {m} | {tool} | {statistics.median(rps):,.0f} ({min(rps):,.0f}–{max(rps):,.0f}) | "
                          f"{statistics.median(cpu):.2f} ({min(cpu):.2f}–{max(cpu):.2f}) | {rcol} |")
            if a.strace:
                if not shutil.which("strace"):
                    raise SystemExit("strace is not installed")
                print("\nSystem calls per request (`strace -c -f`, one 3 s run each; strace slows both tools):\n")
                print("| mode | tool | system calls per request | top five per request |")
                print("|---|---|---|---|")
                for m in modes:
                    url = url_of(nginx, m)
                    for tool in ("plateau", "h2load"):
                        argv, parse = plateau_cmd(bin_, url, 3, work) if tool == "plateau" else h2load_cmd(url, 3)
                        s = strace_counts(tool, argv, parse, work, 120)
                        print(f"| {m} | {tool} | {s['syscalls_per_req']:.3f} | {s['top']} |")


if __name__ == "__main__":
    main()
