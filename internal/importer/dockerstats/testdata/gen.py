# Writes the synthetic docker stats fixtures of this directory (no Docker
# engine runs where plateau is developed): an Engine API stream of two
# containers on a cgroup v2 host, one object per line as the daemon writes
# them, with the field set of API 1.45; and the CLI's table and JSON lines
# for the same readings, formatted as the docker CLI formats them (go-units
# HumanSizeWithPrecision(…, 3) for I/O, BytesSize for memory). Run:
#   python3 gen.py
import json
import random

random.seed(7)
NCPU = 4
LIMIT = 2 * 1024**3


def human(n):  # go-units HumanSizeWithPrecision(n, 3): decimal
    units = ["B", "kB", "MB", "GB", "TB"]
    i = 0
    while n >= 1000 and i < len(units) - 1:
        n /= 1000.0
        i += 1
    return f"{n:.3g}{units[i]}"


def binary(n):  # go-units BytesSize: binary, 4 significant digits
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    i = 0
    while n >= 1024 and i < len(units) - 1:
        n /= 1024.0
        i += 1
    return f"{n:.4g}{units[i]}"


def stream(name, cid, busy):
    t0 = 1778400000.0  # 2026-05-10T08:00:00Z
    sysu, tot, user, kern = 5_000_000_000_000, 40_000_000_000, 30_000_000_000, 10_000_000_000
    rx, tx, rd, wr = 1_000_000, 400_000, 20_000_000, 5_000_000
    prev = None
    objs = []
    for i in range(8):
        t = t0 + i * (1.0 + random.uniform(-0.02, 0.03))
        dsys = int(NCPU * 1e9 * (1.0 if i else 0))
        dcpu = int(busy * 1e9 * random.uniform(0.6, 1.4)) if i else 0
        sysu += dsys
        tot += dcpu
        user += int(dcpu * 0.8)
        kern += dcpu - int(dcpu * 0.8)
        rx += random.randint(50_000, 90_000)
        tx += random.randint(20_000, 40_000)
        wr += random.choice([0, 4096, 8192])
        usage = 300 * 1024**2 + i * random.randint(100_000, 900_000)
        inactive = 40 * 1024**2 + random.randint(0, 1_000_000)
        cur = {"cpu_usage": {"total_usage": tot, "usage_in_kernelmode": kern, "usage_in_usermode": user},
               "system_cpu_usage": sysu, "online_cpus": NCPU,
               "throttling_data": {"periods": 0, "throttled_periods": 0, "throttled_time": 0}}
        pre = prev or {"cpu_usage": {"total_usage": 0, "usage_in_kernelmode": 0, "usage_in_usermode": 0},
                       "throttling_data": {"periods": 0, "throttled_periods": 0, "throttled_time": 0}}
        ts = f"{t:.9f}"
        sec, frac = ts.split(".")
        import datetime
        read = datetime.datetime.fromtimestamp(int(sec), datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + "." + frac + "Z"
        obj = {"read": read, "preread": objs[-1]["read"] if objs else "0001-01-01T00:00:00Z",
               "pids_stats": {"current": 40 + random.randint(0, 3), "limit": 18939},
               "blkio_stats": {"io_service_bytes_recursive": [{"major": 8, "minor": 0, "op": "read", "value": rd},
                                                             {"major": 8, "minor": 0, "op": "write", "value": wr}],
                               "io_serviced_recursive": None, "io_queue_recursive": None, "io_service_time_recursive": None,
                               "io_wait_time_recursive": None, "io_merged_recursive": None, "io_time_recursive": None,
                               "sectors_recursive": None},
               "num_procs": 0, "storage_stats": {}, "cpu_stats": cur, "precpu_stats": pre,
               "memory_stats": {"usage": usage, "stats": {"active_anon": usage - inactive - 1_000_000, "active_file": 500_000,
                                                          "anon": usage - inactive, "file": inactive + 500_000,
                                                          "inactive_anon": 0, "inactive_file": inactive, "kernel_stack": 720896},
                                "limit": LIMIT},
               "name": "/" + name, "id": cid,
               "networks": {"eth0": {"rx_bytes": rx, "rx_packets": rx // 900, "rx_errors": 0, "rx_dropped": 0,
                                     "tx_bytes": tx, "tx_packets": tx // 700, "tx_errors": 0, "tx_dropped": 0},
                            "eth1": {"rx_bytes": 1200, "rx_packets": 10, "rx_errors": 0, "rx_dropped": 0,
                                     "tx_bytes": 800, "tx_packets": 8, "tx_errors": 0, "tx_dropped": 0}}}
        objs.append(obj)
        prev = cur
    return objs


lar = stream("lar", "091c9a0c0d2e0622e54ee6deb51e67d2a3f43993a854890bbae2473f7d1dc648", 0.35)
cave = stream("cave", "7be5a9e1c2f04c0b8e3d2a1f6b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c", 1.2)
with open("engine-v2-stream.json", "w") as f:
    for o in lar + cave:
        f.write(json.dumps(o, separators=(",", ":")) + "\n")


def cli_fields(o):
    cur, pre = o["cpu_stats"], o["precpu_stats"]
    # As the CLI computes it, also for the first reading (empty precpu):
    # then it is the average since the container started.
    cpu = 0.0
    d = cur["cpu_usage"]["total_usage"] - pre["cpu_usage"]["total_usage"]
    s = cur["system_cpu_usage"] - pre.get("system_cpu_usage", 0)
    if d > 0 and s > 0:
        cpu = d / s * cur["online_cpus"] * 100
    m = o["memory_stats"]
    used = m["usage"] - m["stats"]["inactive_file"]
    rx = sum(n["rx_bytes"] for n in o["networks"].values())
    tx = sum(n["tx_bytes"] for n in o["networks"].values())
    b = o["blkio_stats"]["io_service_bytes_recursive"]
    rd = sum(e["value"] for e in b if e["op"][0] in "rR")
    wr = sum(e["value"] for e in b if e["op"][0] in "wW")
    return {"ID": o["id"][:12], "Name": o["name"][1:], "CPUPerc": f"{cpu:.2f}%",
            "MemUsage": f"{binary(used)} / {binary(m['limit'])}", "MemPerc": f"{used / m['limit'] * 100:.2f}%",
            "NetIO": f"{human(rx)} / {human(tx)}", "BlockIO": f"{human(rd)} / {human(wr)}",
            "PIDs": str(o["pids_stats"]["current"])}


rows = list(zip(lar, cave))
head = ["CONTAINER ID", "NAME", "CPU %", "MEM USAGE / LIMIT", "MEM %", "NET I/O", "BLOCK I/O", "PIDS"]
keys = ["ID", "Name", "CPUPerc", "MemUsage", "MemPerc", "NetIO", "BlockIO", "PIDs"]


def table(pair):  # tabwriter(minwidth 10, padding 3)
    cells = [head] + [[cli_fields(o)[k] for k in keys] for o in pair]
    widths = [max(10, max(len(r[i]) for r in cells) + 3) for i in range(len(head))]
    return ["".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]


# `docker stats --no-stream` appended to a log every few seconds.
with open("cli-table.log", "w") as f:
    for pair in rows:
        f.write("\n".join(table(pair)) + "\n")
# The redrawing TTY output, captured: each screen starts by clearing it and
# moving home, every line ends by erasing the rest of it.
with open("cli-table-tty.log", "w", newline="") as f:
    for pair in rows:
        f.write("\x1b[2J\x1b[H")
        f.write("".join(line + "\x1b[K\r\n" for line in table(pair)))
# --format '{{json .}}', plain and with a wrapper's date -Iseconds prefix.
with open("cli-json.log", "w") as f:
    for pair in rows:
        for o in pair:
            f.write(json.dumps(cli_fields(o), separators=(",", ":"), sort_keys=True) + "\n")
with open("cli-json-timed.log", "w") as f:
    for pair in rows:
        for o in pair:
            f.write(o["read"][:19] + "+00:00 " + json.dumps(cli_fields(o), separators=(",", ":"), sort_keys=True) + "\n")
