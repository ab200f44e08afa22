"""N app instances on loopback ports behind HAProxy, as one command (``deploy/run_cluster.sh``).

    python -m deploy.cluster --instances 2 --db postgresql+psycopg://... [--port 8500]

The first instance starts alone (opening the database applies the schema migrations, which
should not race) and seeds the demo study unless ``--no-demo``; the others start together with
``--no-demo``. Every instance gets the same ``STUDYAPP_BASE_URL`` (the balancer's address, used
in invite links) and the same Streamlit cookie secret (``STREAMLIT_SERVER_COOKIE_SECRET``, so a
signed cookie one instance set, e.g. the XSRF cookie of an upload, is valid on the others after
a failover). HAProxy gets ``deploy/haproxy.cfg`` with one ``server`` line per instance. Ctrl-C
(or SIGTERM) stops everything. ``Cluster`` is the same as a context manager, for the
deployment test and ``benchmarks.load_web``.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = Path(__file__).resolve().parent / "haproxy.cfg"
START_WAIT_S = 90


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthy(base: str) -> bool:
    """Whether ``base`` answers Streamlit's ``/_stcore/health`` with 200."""
    try:
        with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def haproxy_config(bind: str, ports: list[int]) -> str:
    servers = "\n".join(f"    server app{k} 127.0.0.1:{port} check cookie app{k}"
                        for k, port in enumerate(ports, 1))
    return TEMPLATE.read_text().replace("__BIND__", bind).replace("__SERVERS__", servers)


class Cluster:
    """``instances`` app processes and HAProxy in front, in ``workdir`` (logs, config).
    ``db``: a ``DATABASE_URL`` (``None``: ``STUDYAPP_DB``/``DATABASE_URL`` of the environment).
    ``command``: another server to run as each instance, ``command(port) -> argv`` (default: the
    app, ``python -m studyapp serve``)."""

    def __init__(self, instances: int, *, db: str | None = None, port: int | None = None,
                 workdir: Path | None = None, demo: bool = False, env: dict | None = None,
                 command=None):
        self.n = instances
        self.port = port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="studyapp-cluster-"))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.env = {**os.environ, **(env or {}), "STUDYAPP_BASE_URL": self.base, "PYTHONPATH": str(ROOT),
                    "STREAMLIT_SERVER_COOKIE_SECRET": os.environ.get("STREAMLIT_SERVER_COOKIE_SECRET")
                    or secrets.token_hex(32)}
        if db:
            self.env["DATABASE_URL"] = db
        self.demo = demo
        self.command = command
        self.ports = [free_port() for _ in range(instances)]
        self.procs: list[subprocess.Popen | None] = [None] * instances
        self.balancer: subprocess.Popen | None = None

    def instance_base(self, k: int) -> str:
        return f"http://127.0.0.1:{self.ports[k]}"

    def start_instance(self, k: int) -> subprocess.Popen:
        command = self.command(self.ports[k]) if self.command else (
            [sys.executable, "-m", "studyapp", "serve", "--port", str(self.ports[k]), "--address", "127.0.0.1"]
            + ([] if self.demo and k == 0 else ["--no-demo"]))
        log = open(self.workdir / f"instance{k + 1}.log", "ab")
        self.procs[k] = subprocess.Popen(command, cwd=ROOT, env=self.env, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        return self.procs[k]

    def wait_healthy(self, ks) -> None:
        deadline = time.monotonic() + START_WAIT_S
        for k in ks:
            while not healthy(self.instance_base(k)):
                proc = self.procs[k]
                if proc.poll() is not None or time.monotonic() > deadline:
                    log = (self.workdir / f"instance{k + 1}.log").read_text(errors="replace")
                    raise RuntimeError(f"instance {k + 1} did not start:\n{log[-2000:]}")
                time.sleep(0.25)

    def start(self) -> Cluster:
        haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
        if not os.path.exists(haproxy):
            raise RuntimeError("haproxy is not installed (apt-get install haproxy)")
        try:
            self.start_instance(0)
            self.wait_healthy([0])
            for k in range(1, self.n):
                self.start_instance(k)
            self.wait_healthy(range(1, self.n))
            config = self.workdir / "haproxy.cfg"
            config.write_text(haproxy_config(f"127.0.0.1:{self.port}", self.ports))
            log = open(self.workdir / "haproxy.log", "ab")
            self.balancer = subprocess.Popen([haproxy, "-db", "-f", str(config)], stdout=log,
                                             stderr=subprocess.STDOUT, start_new_session=True)
            log.close()
            deadline = time.monotonic() + 20
            while not healthy(self.base):
                if self.balancer.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("haproxy did not start: "
                                       + (self.workdir / "haproxy.log").read_text()[-2000:])
                time.sleep(0.1)
        except BaseException:
            self.stop()
            raise
        return self

    def pids(self) -> list[int]:
        """The live instances' process ids (the Streamlit server: ``serve`` execs into it)."""
        return [p.pid for p in self.procs if p is not None and p.poll() is None]

    def kill(self, k: int, sig: int = signal.SIGKILL) -> None:
        """Kill instance ``k`` (0-based) as a crash would."""
        proc = self.procs[k]
        if proc is not None and proc.poll() is None:
            proc.send_signal(sig)
            proc.wait(timeout=30)

    def stop(self) -> None:
        for proc in [self.balancer, *self.procs]:
            if proc is not None and proc.poll() is None:
                proc.terminate()
        for proc in [self.balancer, *self.procs]:
            if proc is None:
                continue
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=2, help="app instances (default 2)")
    parser.add_argument("--db", help="DATABASE_URL of the shared database (default: the environment's)")
    parser.add_argument("--port", type=int, default=8500, help="the balancer's port (default 8500)")
    parser.add_argument("--no-demo", action="store_true", help="do not seed the demo study")
    parser.add_argument("--workdir", type=Path, help="folder for the logs and haproxy.cfg (default: a temporary one)")
    args = parser.parse_args(argv)
    if args.instances < 1:
        parser.error("--instances: at least 1")
    cluster = Cluster(args.instances, db=args.db, port=args.port, workdir=args.workdir, demo=not args.no_demo)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with cluster:
        print(f"cluster: {args.instances} instance(s) on ports {', '.join(map(str, cluster.ports))} "
              f"behind HAProxy at {cluster.base} (logs in {cluster.workdir})", flush=True)
        try:
            while all(p.poll() is None for p in [cluster.balancer]):
                time.sleep(1)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
