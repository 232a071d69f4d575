#!/usr/bin/env python3
"""The open model's floor: plateau at a fixed rate beside the least a generator can do.

At a fixed rate (5,000 req/s, 10 connections: the peer harness's "rate" measurement)
the generator sleeps between requests, and on some machines a sleep and wake-up costs
far more than the request. This measures, in the same repetitions, against nginx
(`return 200 'ok'`, one worker, CPU 1) with each generator on CPU 0:

  plateau        `plateau run`, load {rate, duration, max_users: conns} (the harness's plan)
  oha            `oha -q RATE -c CONNS -z Ds` when oha is found (--oha, PATH)
  c-floor-ms     floor.c: one C thread, epoll, write + read per request and nothing
                 else, sleeping to the next due time rounded up to whole milliseconds
                 (as Go's netpoller does, so due requests leave in small batches)
  c-floor-exact  floor.c sleeping to the nanosecond: one wake-up per request
  go-floor       gofloor: the same in plain Go (a timer, a dispatcher, one goroutine
                 and net.Conn per connection)

CPU per request = the process's user + system time / its responses; medians (min–max).

--closed measures the closed loop instead (the harness's "max": 50 connections, each
sending its next request when the last response has arrived): plateau (load {users:
conns}), go-floor with rate 0 and wrk when found (--wrk, PATH), with req/s and CPU per
request beside wrk's. wrk is the physical reference there; go-floor says what plain Go
with a goroutine per connection reaches on the same machine.

  bench/openfloor/run.py [--reps 5] [--duration 10] [--rate 5000] [--conns 10]
                         [--closed] [--plateau BIN] [--oha BIN] [--wrk BIN] [--json FILE]

Loopback only; nothing is left running. Needs nginx, cc, go, taskset
(scripts/install-test-deps.sh).
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from benchlib import GEN_CPU, HOST, REPO, SERVER_CPU, Nginx, build_plateau, require, run_pinned, scratch  # noqa: E402

SERVER = """  server {{
    listen {host}:{port};
    location / {{ default_type text/plain; return 200 'ok'; }}
  }}"""


def plateau_cmd(bin_, url, a, work: Path):
    plan = work / "plan.yaml"
    load = (f"{{users: {a.conns}, duration: {a.duration}s}}" if a.closed
            else f"{{rate: {a.rate}/s, duration: {a.duration}s, max_users: {a.conns}}}")
    plan.write_text(f"name: openfloor\ntarget: {url}\nworkloads:\n  w:\n    scenario:\n"
                    f"      - request: {{name: get, url: /}}\n"
                    f"    load: {load}\n")
    out = work / "run"
    shutil.rmtree(out, ignore_errors=True)

    def parse(_):
        tot = next(l for l in json.loads((out / "summary.json").read_text())["labels"] if l["label"] == "TOTAL")
        return tot["samples"], tot["errors"]
    return [bin_, "run", str(plan), "-o", str(out), "-q"], parse


def oha_cmd(bin_, url, a):
    def parse(text):
        j = json.loads(text[text.index("{"):])
        codes = j.get("statusCodeDistribution", {})
        return sum(codes.values()), sum(v for k, v in codes.items() if k != "200") + sum(j.get("errorDistribution", {}).values())
    return [bin_, "--no-tui", "--output-format", "json", "-z", f"{a.duration}s", "-c", str(a.conns),
            "-q", str(a.rate), url], parse


def wrk_cmd(bin_, url, a):
    def parse(text):
        # "  606123 requests in 8.00s, 75.20MB read" and, when any, "Non-2xx or 3xx
        # responses: N" and "Socket errors: connect A, read B, write C, timeout D".
        reqs = int(re.search(r"(\d+) requests in", text).group(1))
        errors = sum(int(n) for n in re.findall(r"Non-2xx or 3xx responses: (\d+)", text))
        for m in re.finditer(r"Socket errors: (.*)", text):
            errors += sum(int(n) for n in re.findall(r"\d+", m.group(1)))
        return reqs, errors
    return [bin_, "-t1", f"-c{a.conns}", f"-d{a.duration}s", url + "/"], parse


def floor_parse(text):
    j = json.loads(text.strip().splitlines()[-1])
    return j["requests"], 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--duration", type=int, default=10, help="seconds per run")
    ap.add_argument("--rate", type=int, default=5000)
    ap.add_argument("--conns", type=int, help="connections (default 10, 50 with --closed)")
    ap.add_argument("--closed", action="store_true", help="the closed loop instead of the fixed rate")
    ap.add_argument("--wrk", default=shutil.which("wrk"))
    ap.add_argument("--plateau", default=os.environ.get("PLATEAU_BIN"))
    ap.add_argument("--oha", default=shutil.which("oha"))
    ap.add_argument("--json", help="also write every run's figures to this file")
    a = ap.parse_args()
    if a.conns is None:
        a.conns = 50 if a.closed else 10
    require("nginx", "cc", "go", "taskset")
    with scratch("openfloor-") as work:
        floor, gofloor = str(work / "floor"), str(work / "gofloor")
        subprocess.run(["cc", "-O2", "-Wall", "-o", floor, str(HERE / "floor.c")], check=True)
        subprocess.run(["go", "build", "-o", gofloor, "./bench/openfloor/gofloor"], cwd=REPO, check=True)
        plateau = a.plateau or build_plateau(work)
        with Nginx(work, ("plain",), lambda d, ports: SERVER.format(host=HOST, port=ports["plain"])) as nginx:
            port = nginx.ports["plain"]
            url = f"http://{HOST}:{port}"
            if a.closed:
                tools = {
                    "plateau": lambda: plateau_cmd(plateau, url, a, work),
                    "go-floor": lambda: ([gofloor, f"{HOST}:{port}", "0", str(a.duration), str(a.conns)],
                                         floor_parse),
                }
                if a.wrk:
                    tools["wrk"] = lambda: wrk_cmd(a.wrk, url, a)
            else:
                tools = {
                    "plateau": lambda: plateau_cmd(plateau, url, a, work),
                    "c-floor-ms": lambda: ([floor, str(port), str(a.rate), str(a.duration), "ms", str(a.conns)],
                                           floor_parse),
                    "c-floor-exact": lambda: ([floor, str(port), str(a.rate), str(a.duration), "exact",
                                               str(a.conns)], floor_parse),
                    "go-floor": lambda: ([gofloor, f"{HOST}:{port}", str(a.rate), str(a.duration), str(a.conns)],
                                         floor_parse),
                }
                if a.oha:
                    tools["oha"] = lambda: oha_cmd(a.oha, url + "/", a)
            runs = []
            for rep in range(a.reps):
                order = list(tools) if rep % 2 == 0 else list(tools)[::-1]
                for tool in order:
                    argv, parse = tools[tool]()
                    out, rc, cpu, wall = run_pinned(argv, a.duration * 6 + 60)
                    # plateau exits 3 when it calls its own run invalid (iterations dropped
                    # or its CPU saturated): its figures are still reported, with the code.
                    if rc not in ((0, 3) if tool == "plateau" else (0,)):
                        raise SystemExit(f"{tool} exited with {rc}:\n{out}")
                    reqs, errors = parse(out)
                    r = {"rep": rep + 1, "tool": tool, "requests": reqs, "errors": errors, "exit": rc,
                         "cpu_s": cpu, "cpu_us_per_req": cpu / reqs * 1e6, "rps": reqs / a.duration}
                    runs.append(r)
                    print(f"rep {rep + 1} {tool:14} {reqs:7d} responses ({r['rps']:,.0f}/s), {errors} errors, "
                          f"exit {rc}: {r['cpu_us_per_req']:6.1f} µs CPU/req", file=sys.stderr, flush=True)
            if a.json:
                Path(a.json).write_text(json.dumps(runs, indent=1))
            load = os.getloadavg()
            shape = "closed loop" if a.closed else f"{a.rate} req/s"
            print(f"\n{shape}, {a.conns} connections, {a.duration} s per run, nginx on CPU {SERVER_CPU}, "
                  f"generator on CPU {GEN_CPU}, {a.reps} repetitions, median (min–max); load average after: "
                  f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f}\n")
            ref = ("wrk" if a.wrk else None) if a.closed else ("oha" if a.oha else None)
            # The ratio that matters: CPU per request against oha at a fixed rate,
            # throughput against wrk in the closed loop.
            key = "rps" if a.closed else "cpu_us_per_req"
            print("| tool | responses/s | CPU µs per request |" + (f" {'req/s' if a.closed else 'CPU'} / {ref}'s (same repetition) |" if ref else ""))
            print("|---|---|---|" + ("---|" if ref else ""))
            for tool in tools:
                mine = [r for r in runs if r["tool"] == tool]
                cpu = [r["cpu_us_per_req"] for r in mine]
                rps = [r["rps"] for r in mine]
                line = (f"| {tool} | {statistics.median(rps):,.0f} | **{statistics.median(cpu):.1f}** "
                        f"({min(cpu):.1f}–{max(cpu):.1f}) |")
                if ref:
                    ratio = [r[key] / next(o[key] for o in runs if o["tool"] == ref and o["rep"] == r["rep"])
                             for r in mine]
                    line += f" {statistics.median(ratio):.2f}× ({min(ratio):.2f}–{max(ratio):.2f}) |"
                print(line)


if __name__ == "__main__":
    main()
