"""What the repository's benchmark scripts share: a Debian nginx pinned to its own CPU
on loopback, and running a tool pinned to the generator's CPU while measuring its CPU
time. The rules are the peer harness's (../shared/bench): loopback only, nginx with one
worker on CPU 1, the generator on CPU 0 (Go sizes GOMAXPROCS to the affinity: 1), CPU
per request = the generator process's user + system time over its requests.
"""
import contextlib
import os
import resource
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
GEN_CPU, SERVER_CPU = 0, 1

# `{servers}` is filled with the caller's server blocks; `{dir}` is nginx's folder.
NGINX_CONF = """worker_processes 1;
daemon off;
master_process off;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  keepalive_requests 1000000000;
  keepalive_timeout 300s;
  http2_max_concurrent_streams 128;
  server_tokens off;
  client_body_temp_path {dir}; proxy_temp_path {dir}; fastcgi_temp_path {dir};
  uwsgi_temp_path {dir}; scgi_temp_path {dir};
{servers}
}}
"""


def free_port():
    s = socket.socket()
    s.bind((HOST, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def pin(argv, cpu):
    return ["taskset", "-c", str(cpu)] + argv


def require(*exes):
    for exe in exes:
        if not shutil.which(exe) and not (exe == "nginx" and os.path.exists("/usr/sbin/nginx")):
            raise SystemExit(f"{exe} is not installed: run scripts/install-test-deps.sh")
    if os.cpu_count() < 2:
        raise SystemExit("needs 2 CPUs (generator and server pinned apart)")


class Nginx:
    """nginx on CPU 1 serving `return 200 'ok'`. servers(dir, ports) returns the server
    blocks for the named ports (free loopback ports, chosen here); tls makes a
    throwaway certificate dir/cert.pem, dir/key.pem first. As a context manager it
    stops nginx at the end of the block."""

    def __init__(self, work: Path, names, servers, tls=False):
        self.dir = work / "nginx"
        self.dir.mkdir(parents=True)
        if tls:
            subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                            "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                            "-keyout", str(self.dir / "key.pem"), "-out", str(self.dir / "cert.pem")],
                           check=True, capture_output=True)
        self.ports = {n: free_port() for n in names}
        conf = self.dir / "nginx.conf"
        conf.write_text(NGINX_CONF.format(dir=self.dir, servers=servers(self.dir, self.ports)))
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.proc = subprocess.Popen(pin([nginx, "-p", str(self.dir), "-e", str(self.dir / "error.log"),
                                          "-c", str(conf)], SERVER_CPU),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True)
        for port in self.ports.values():
            for _ in range(100):
                try:
                    socket.create_connection((HOST, port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.05)
            else:
                self.stop()
                raise SystemExit(f"nginx did not listen on {port}: {(self.dir / 'error.log').read_text()}")

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.stop()

    def stop(self):
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass


@contextlib.contextmanager
def scratch(prefix):
    """A temporary folder for one benchmark's files, removed however the run ends."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_measured(argv, timeout):
    """Runs argv; returns (stdout+stderr, exit code, wall seconds)."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
        raise SystemExit(f"{argv[0]} ran over {timeout}s:\n{out.decode(errors='replace')}")
    return out.decode(errors="replace"), p.returncode, time.monotonic() - t0


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_pinned(argv, timeout):
    """Runs argv on the generator's CPU; returns (output, exit code, CPU seconds, wall
    seconds). communicate() reaps the child, so its rusage is in RUSAGE_CHILDREN."""
    cpu0 = children_cpu()
    out, rc, wall = run_measured(pin(argv, GEN_CPU), timeout)
    return out, rc, children_cpu() - cpu0, wall


def build_plateau(work: Path):
    bin_ = work / "plateau"
    subprocess.run(["go", "build", "-o", str(bin_), "./cmd/plateau"], cwd=REPO, check=True)
    return str(bin_)
