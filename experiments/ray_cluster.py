#!/usr/bin/env python
"""Measure the Ray engine on a real local Ray cluster against the process pool, same run.

Run from the repository root::

    .venv/bin/python experiments/ray_cluster.py [--copies 20] [--workers 2] [--repeats 3]

**The cluster.** A real Ray cluster on this machine, started with Ray's own CLI the way the
README starts one across machines: a head node (``ray start --head --num-cpus 0``: GCS,
its raylet, no CPUs for tasks, so all cleaning happens off the head) and ``--nodes`` worker
nodes (``ray start --address 127.0.0.1:PORT --num-cpus K``), each a separate raylet with
its own object store, so every batch of wikitext crosses from the driver's object store to
a worker node's and its passages come back, over TCP, as between machines. Each node gets
its own temp dir (not ``/tmp/ray``, so no ``ray.init()`` elsewhere on this machine joins it)
and its own free ports; the cluster uses token authentication with a random token made for
this run, passed in the environment only. Ray resolves ``127.0.0.1`` to the machine's
address and its servers listen on every interface; the token is what keeps others out. The
``ray start --block`` processes are ours, each in its own session: they are stopped with
SIGTERM by process id at the end, on an error and on Ctrl-C (and get SIGTERM from the
kernel if this script dies), then anything left in their sessions is killed by id. ``ray
stop`` is never used: it stops every Ray process on the machine, other people's included.

**The input.** The real sample dump has 106 articles, too few to time a cluster by (Ray's
scheduling would be all start-up and tail). Its 106 article pages are written ``--copies``
times into one ``.xml.bz2`` in a temp dir, each copy with its own page ids, revision ids
and titles (`` (copy k)``), so the input is real wikitext throughout but each article's
text recurs ``--copies`` times. It is bz2-compressed like a real dump, so the driver pays
for decompression as it would. Nothing is written into the repository but the result file.

**What is measured.** Every measured ingest runs in a fresh subprocess (so the pool forks
from a process Ray never touched, and each run starts cold in the same way) into a fresh
store in the temp dir: ``serial`` (``workers=1``, in-process: the 1-worker reference),
``pool`` (``--workers`` processes) and ``ray`` (the Ray engine on the cluster, whose
worker nodes hold ``--workers`` CPUs in all, default batch and in-flight bound). Each round
runs serial, pool, ray in that order, so pool and ray alternate ABAB... across rounds, after
one unmeasured warm-up round (``freshwiki corpus ingest --engine ray --ray-address ...``,
the real CLI, against the cluster, and the pool, on one copy), which also starts Ray's
worker processes. The time is the ``ingest`` call alone; connecting to the cluster is
timed apart (it happens once per ingest, not per page).

Reported per engine: articles/s (median and range over rounds); per core (articles/s over
the worker cores); parallel efficiency (articles/s over workers x the same round's serial
articles/s); articles per CPU-second (user+sys of the driver and its children, plus, for
Ray, every process of the cluster: raylets, GCS, agents, workers), which the machine's
other load does not inflate. The headline is the ratio Ray/pool of throughput per core in
each round (same cores, so the throughput ratio), median and range; the goal is >= 0.8.
Outputs: every run's store (every page, revision and passage row in storage order) is
hashed; all hashes must be equal. Also: the reader alone on the driver (the ceiling one
driver sets), Ray's round trip for an empty task, and the load average.

The machine has 2 cores shared with other jobs: load averages and other runnable tasks
are recorded before and after every run. Results go to
``experiments/results/ray_cluster.json``.
"""

from __future__ import annotations

import argparse
import bz2
import contextlib
import ctypes
import hashlib
import json
import os
import platform
import resource
import secrets
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

# The ingest benchmark's copies of the sample dump: same pages, ids shifted per copy.
from ingest import copy_page, sample_parts

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
RESULTS_PATH = ROOT / "results" / "ray_cluster.json"
DUMP_PATH = (
    REPO.parent / "shared" / "data" / "wikipedia" / "dumps"
    / "enwiki-pages-articles-sample.xml.bz2"
)
GOAL = 0.8
BUSY_OTHERS = 0.5  # other runnable tasks (mean) from which the machine counts as busy
NODE_START_TIMEOUT_S = 120.0
ENGINES = ("serial", "pool", "ray")


def log(msg: str) -> None:
    print(f"  .. {msg}", flush=True)


# -- the machine ------------------------------------------------------------------------------


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def others_running(samples: int = 10, interval_s: float = 0.1) -> float:
    """Mean runnable tasks other than this one over about a second (``/proc/loadavg``).

    Unlike the load average it is not inflated by our own previous run, so it says whether
    someone else is using the cores now. (Taken while no run of ours is going.)
    """
    counts = []
    for _ in range(samples):
        running = Path("/proc/loadavg").read_text().split()[3].split("/")[0]
        counts.append(int(running) - 1)
        time.sleep(interval_s)
    return sum(counts) / len(counts)


def machine() -> dict[str, Any]:
    model = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    mem_kb = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text()
                  .splitlines() if line.startswith("MemTotal:"))
    return {
        "cpu_model": model,
        "cpu_count": os.cpu_count(),
        "memory_gib": round(mem_kb / 2**20, 1),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "ray": metadata.version("ray"),
        "shared": "the machine is shared with other jobs: its load is recorded before and "
        "after every run; pages per CPU-second does not depend on it",
    }


def git_state() -> dict[str, Any]:
    """The commit measured, and whether the working tree differs from it (read-only git)."""
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
        return done.stdout.strip()

    changed = git("status", "--porcelain", "--", "src", "experiments/ray_cluster.py")
    return {"commit": git("rev-parse", "HEAD"), "uncommitted_changes_in_src": bool(changed),
            "changed": changed.splitlines()}


# -- the input --------------------------------------------------------------------------------

def write_input(dump: Path, copies: int, path: Path) -> dict[str, Any]:
    header, pages, footer = sample_parts(dump)
    xml_bytes = 0
    with bz2.open(path, "wb", compresslevel=9) as out:
        for part in (header, *(copy_page(p, k) for k in range(copies) for p in pages), footer):
            out.write(part)
            xml_bytes += len(part)
    return {
        "what": f"the sample dump's {len(pages)} article pages repeated {copies} times (each "
        "copy with its own page ids, revision ids and titles), one bz2 file in a temp dir",
        "from": str(dump),
        "copies": copies,
        "articles": len(pages) * copies,
        "xml_mb": round(xml_bytes / 1e6, 1),
        "bz2_mb": round(path.stat().st_size / 1e6, 1),
    }


# -- the cluster ------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _die_with_parent() -> None:
    """In a ``ray start`` child: SIGTERM when this script dies, even by SIGKILL."""
    pr_set_pdeathsig = 1
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def process_sessions() -> dict[int, tuple[int, int]]:
    """Every process: pid -> (session id, CPU ticks incl. reaped children)."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        # after the name: state ppid pgrp session ... utime(11) stime cutime cstime
        table[int(entry.name)] = (int(fields[3]), sum(int(x) for x in fields[11:15]))
    return table


@dataclass
class LocalRayCluster:
    """A head and worker nodes, each a ``ray start --block`` process we own by pid."""

    root: Path
    nodes: int
    cpus_per_node: int
    env: dict[str, str] = field(default_factory=dict)
    address: str = ""
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    layout: list[dict[str, Any]] = field(default_factory=list)
    started_s: float = 0.0

    def start(self) -> None:
        t0 = time.perf_counter()
        ray = str(Path(sys.executable).with_name("ray"))
        self.env = {**os.environ, "RAY_AUTH_MODE": "token",
                    "RAY_AUTH_TOKEN": secrets.token_hex(32)}
        self.env.pop("RAY_ADDRESS", None)
        gcs_port = free_port()
        self.address = f"127.0.0.1:{gcs_port}"
        self._node(ray, "head", ["--head", "--port", str(gcs_port), "--num-cpus", "0",
                                 "--include-dashboard", "false",
                                 "--dashboard-port", str(free_port())], cpus=0)
        for k in range(self.nodes):
            self._node(ray, f"worker{k}", ["--address", self.address,
                                           "--num-cpus", str(self.cpus_per_node)],
                       cpus=self.cpus_per_node)
        self.started_s = round(time.perf_counter() - t0, 2)

    def _node(self, ray: str, name: str, args: list[str], cpus: int) -> None:
        ports = ["--node-manager-port", "--object-manager-port", "--metrics-export-port",
                 "--dashboard-agent-listen-port", "--dashboard-agent-grpc-port",
                 "--runtime-env-agent-port"]
        cmd = [ray, "start", "--block", "--node-ip-address", "127.0.0.1",
               "--temp-dir", str(self.root / name), *args]
        for flag in ports:
            cmd += [flag, str(free_port())]
        logfile = self.root / f"{name}.log"
        with logfile.open("wb") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=self.env,
                                    start_new_session=True, preexec_fn=_die_with_parent)
        self.procs.append(proc)
        deadline = time.monotonic() + NODE_START_TIMEOUT_S
        while b"Ray runtime started" not in logfile.read_bytes():
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = logfile.read_text(errors="replace")[-3000:]
                raise RuntimeError(f"ray node {name} did not start:\n{tail}")
            time.sleep(0.2)
        self.layout.append({"node": name, "pid": proc.pid, "num_cpus": cpus,
                            "command": " ".join(cmd[1:]).replace(str(self.root), "TMP")})
        log(f"ray node {name} up (pid {proc.pid}, {cpus} CPUs)")

    def sessions(self) -> set[int]:
        return {p.pid for p in self.procs}  # each ``ray start`` leads its own session

    def cpu_ticks(self) -> int:
        """CPU of every live process of the cluster (workers included), in clock ticks."""
        mine = self.sessions()
        return sum(ticks for sid, ticks in process_sessions().values() if sid in mine)

    def stop(self) -> None:
        """SIGTERM each node (workers first), then kill what is left in their sessions."""
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        mine = self.sessions()
        left = [pid for pid, (sid, _) in process_sessions().items() if sid in mine]
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if left:
            log(f"killed {len(left)} leftover cluster process(es) by pid")
        self.procs.clear()


# -- one measured run, in a child process -----------------------------------------------------


def cpu_seconds() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def child(args: argparse.Namespace) -> int:
    """Body of a measurement subprocess: one ingest (or reader pass, or no-op tasks); JSON."""
    result: dict[str, Any] = {}
    if args.child == "noop":
        import ray

        ray.init(address=args.address, log_to_driver=False, configure_logging=False)
        noop = ray.remote(num_cpus=1)(lambda: None)
        ray.get([noop.remote() for _ in range(20)])
        n = 500
        t0 = time.perf_counter()
        for _ in range(n):
            ray.get(noop.remote())
        result["sequential_round_trip_ms"] = round(1e3 * (time.perf_counter() - t0) / n, 3)
        t0 = time.perf_counter()
        ray.get([noop.remote() for _ in range(n)])
        result["pipelined_ms_per_task"] = round(1e3 * (time.perf_counter() - t0) / n, 3)
        ray.shutdown()
        print(json.dumps(result))
        return 0
    if args.child == "reader":
        from freshwiki.corpus import ReadReport, read_source
        from freshwiki.corpus.ingest import is_redirect

        report = ReadReport()
        cpu0, t0 = cpu_seconds(), time.perf_counter()
        n = sum(1 for r in read_source(args.input, report=report) if not is_redirect(r))
        result.update(wall_s=time.perf_counter() - t0, cpu_s=cpu_seconds() - cpu0, pages=n)
        print(json.dumps(result))
        return 0

    from freshwiki.corpus import CorpusStore, ingest

    connect_s = 0.0
    if args.child == "ray":
        import ray

        t0 = time.perf_counter()
        # The engine's own connection arguments, so the engine finds Ray connected.
        ray.init(address=args.address, include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
        connect_s = time.perf_counter() - t0
        result["nodes"] = [
            {"alive": n["Alive"], "cpus": n["Resources"].get("CPU", 0),
             "head": "node:__internal_head__" in n["Resources"]} for n in ray.nodes()
        ]
    with CorpusStore(args.store) as store:
        cpu0, t0 = cpu_seconds(), time.perf_counter()
        if args.child == "ray":
            report = ingest(args.input, store, engine="ray")
        else:
            report = ingest(args.input, store, workers=args.workers)
        wall = time.perf_counter() - t0
        cpu = cpu_seconds() - cpu0
    if args.child == "ray":
        import ray

        ray.shutdown()
    result.update(wall_s=wall, cpu_s=cpu, connect_s=connect_s, pages=report.revisions_added,
                  passages=report.passages)
    print(json.dumps(result))
    return 0


def store_digest(db: Path) -> str:
    """sha256 of every page, revision and passage row, in storage order."""
    digest = hashlib.sha256()
    with contextlib.closing(sqlite3.connect(db)) as conn:
        for table in ("pages", "revisions", "passages"):
            for row in conn.execute(f"SELECT * FROM {table} ORDER BY rowid"):
                digest.update(repr(row).encode())
    return digest.hexdigest()


@dataclass
class Bench:
    args: argparse.Namespace
    scratch: Path
    cluster: LocalRayCluster

    def spawn(self, mode: str, source: Path, store: Path | None = None) -> dict[str, Any]:
        cmd = [sys.executable, __file__, "--child", mode, "--input", str(source),
               "--workers", str(self.args.workers), "--address", self.cluster.address]
        if store is not None:
            cmd += ["--store", str(store)]
        done = subprocess.run(cmd, capture_output=True, text=True, env=self.cluster.env,
                              timeout=3600)
        if done.returncode != 0:
            raise RuntimeError(f"{mode} run failed ({done.returncode}):\n{done.stderr[-3000:]}")
        out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return out

    def run(self, engine: str, source: Path, round_no: int) -> dict[str, Any]:
        store = self.scratch / f"{engine}-{round_no}.sqlite"
        others0, load0 = others_running(), loadavg()
        cluster0 = self.cluster.cpu_ticks()
        measured = self.spawn(engine, source, store)
        cluster_cpu = (self.cluster.cpu_ticks() - cluster0) / os.sysconf("SC_CLK_TCK")
        others1 = others_running()
        digest = store_digest(store)
        for path in store.parent.glob(store.name + "*"):
            path.unlink()
        workers = 1 if engine == "serial" else self.args.workers
        cpu = measured["cpu_s"] + (cluster_cpu if engine == "ray" else 0.0)
        record = {
            "round": round_no,
            "engine": engine,
            "worker_cores": workers,
            "wall_s": round(measured["wall_s"], 3),
            "pages": measured["pages"],
            "passages": measured["passages"],
            "pages_per_s": round(measured["pages"] / measured["wall_s"], 2),
            "pages_per_s_per_core": round(measured["pages"] / measured["wall_s"] / workers, 2),
            "cpu_s": round(cpu, 2),
            "cpu_s_driver_and_children": round(measured["cpu_s"], 2),
            "cpu_s_cluster_processes": round(cluster_cpu, 2),
            "pages_per_cpu_s": round(measured["pages"] / cpu, 2),
            "connect_s": round(measured["connect_s"], 3),
            "loadavg_before": load0,
            "other_runnable_before": others0,
            "other_runnable_after": others1,
            "store_sha256": digest,
        }
        if "nodes" in measured:
            record["nodes"] = measured["nodes"]
        log(f"round {round_no} {engine:6} {record['wall_s']:7.2f} s  "
            f"{record['pages_per_s']:7.1f} pages/s  {record['pages_per_cpu_s']:6.1f} pages/CPU-s"
            f"  (others {others0:.1f}/{others1:.1f})")
        return record


def warm_up(bench: Bench, small: Path) -> dict[str, Any]:
    """Start Ray's workers and check the real CLI against the cluster, on one copy."""
    home = bench.scratch / "cli-home"
    exe = str(Path(sys.executable).with_name("freshwiki"))
    cmd = [exe, "--home", str(home), "corpus", "ingest", str(small), "--engine", "ray",
           "--ray-address", bench.cluster.address]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=bench.cluster.env,
                          timeout=1800)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"the CLI against the cluster failed:\n{done.stderr[-3000:]}")
    cli_digest = store_digest(next(home.rglob("*.sqlite")))
    pool = bench.run("pool", small, 0)
    ray = bench.run("ray", small, 0)
    return {
        "command": " ".join(["freshwiki", *cmd[1:]]).replace(str(bench.scratch), "TMP"),
        "wall_s_process": round(wall, 2),
        "stdout": done.stdout.strip().splitlines()[-2:],
        "cli_store_equals_pool": cli_digest == pool["store_sha256"] == ray["store_sha256"],
    }


# -- summary ----------------------------------------------------------------------------------


def spread(values: Sequence[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3),
            "max": round(max(values), 3)}


def summarise(runs: list[dict[str, Any]], workers: int) -> dict[str, Any]:
    rounds = sorted({r["round"] for r in runs})
    by = {(r["round"], r["engine"]): r for r in runs}
    out: dict[str, Any] = {}
    for engine in ENGINES:
        mine = [by[n, engine] for n in rounds]
        out[engine] = {
            "pages_per_s": spread([r["pages_per_s"] for r in mine]),
            "pages_per_s_per_core": spread([r["pages_per_s_per_core"] for r in mine]),
            "pages_per_cpu_s": spread([r["pages_per_cpu_s"] for r in mine]),
        }
        if engine != "serial":
            out[engine]["parallel_efficiency"] = spread([
                by[n, engine]["pages_per_s"] / (workers * by[n, "serial"]["pages_per_s"])
                for n in rounds
            ])
    ratios = [by[n, "ray"]["pages_per_s_per_core"] / by[n, "pool"]["pages_per_s_per_core"]
              for n in rounds]
    cpu_ratios = [by[n, "ray"]["pages_per_cpu_s"] / by[n, "pool"]["pages_per_cpu_s"]
                  for n in rounds]
    digests = {r["store_sha256"] for r in runs}
    out["ray_over_pool_per_core"] = {"per_round": [round(x, 3) for x in ratios],
                                     **spread(ratios)}
    out["ray_over_pool_pages_per_cpu_s"] = {"per_round": [round(x, 3) for x in cpu_ratios],
                                            **spread(cpu_ratios)}
    out["goal"] = GOAL
    out["goal_met"] = statistics.median(ratios) >= GOAL
    out["goal_met_in_every_round"] = min(ratios) >= GOAL
    out["outputs_identical"] = len(digests) == 1
    out["store_sha256"] = sorted(digests)
    return out


def verdict(summary: dict[str, Any]) -> str:
    r = summary["ray_over_pool_per_core"]
    head = (f"Ray/pool throughput per core: median {r['median']:.2f} (range {r['min']:.2f}-"
            f"{r['max']:.2f} over {len(r['per_round'])} rounds)")
    met = "GOAL MET" if summary["goal_met"] else "GOAL NOT MET"
    same = ("outputs identical" if summary["outputs_identical"]
            else "OUTPUTS DIFFER between runs")
    return f"{met} (>= {GOAL} of the pool): {head}; {same}"


# -- main -------------------------------------------------------------------------------------


def measure(args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
    started = time.perf_counter()
    load0, others0 = loadavg(), others_running()
    log(f"load average {load0}, other runnable tasks {others0:.1f}")
    meta: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        **git_state(),
        "machine": machine(),
        "loadavg_before": load0,
        "other_runnable_before": others0,
        "repeats": args.repeats,
        "order": "each round: serial, pool, ray (pool and ray alternate ABAB... across "
        "rounds); round 0 is the unmeasured warm-up on one copy",
    }
    big, small = scratch / f"input-{args.copies}x.xml.bz2", scratch / "input-1x.xml.bz2"
    log(f"writing the input: {args.copies} copies of the sample's articles")
    meta["input"] = write_input(args.dump, args.copies, big)
    write_input(args.dump, 1, small)
    cluster = LocalRayCluster(scratch / "ray", nodes=args.nodes,
                              cpus_per_node=args.workers // args.nodes)
    cluster.root.mkdir()
    try:
        cluster.start()
        meta["cluster"] = {
            "what": f"head (0 CPUs) + {args.nodes} worker node(s) x "
            f"{cluster.cpus_per_node} CPU(s), separate raylets and object stores, one "
            "machine; token auth with a per-run random token",
            "address": cluster.address,
            "start_s": cluster.started_s,
            "nodes": cluster.layout,
        }
        bench = Bench(args, scratch, cluster)
        log("warm-up (unmeasured): the CLI against the cluster, pool and ray on one copy")
        meta["warm_up"] = warm_up(bench, small)
        runs: list[dict[str, Any]] = []
        reader: list[dict[str, Any]] = []
        for n in range(1, args.repeats + 1):
            for engine in ENGINES:
                runs.append(bench.run(engine, big, n))
            r = bench.spawn("reader", big)
            reader.append({"round": n, "pages_per_s": round(r["pages"] / r["wall_s"], 1),
                           "pages_per_cpu_s": round(r["pages"] / r["cpu_s"], 1)})
        noop = bench.spawn("noop", small)
    finally:
        log("stopping the cluster")
        cluster.stop()
    meta["loadavg_after"] = loadavg()
    meta["other_runnable_after"] = others_running()
    meta["definitions"] = {
        "pages": "articles cleaned and stored (non-redirect main-namespace pages)",
        "pages_per_s": "pages / wall time of the ingest call (cluster connection excluded, "
        "timed as connect_s)",
        "pages_per_s_per_core": "pages_per_s / worker cores (serial: 1)",
        "parallel_efficiency": "pages_per_s / (worker cores x the same round's serial "
        "pages_per_s)",
        "pages_per_cpu_s": "pages / CPU-seconds (user+sys) of the driver and its children, "
        "plus for ray every process of the cluster during the run",
        "ray_over_pool_per_core": "ray pages_per_s_per_core / pool pages_per_s_per_core, "
        "per round (same cores: the throughput ratio)",
    }
    summary = summarise(runs, args.workers)
    return {
        "meta": meta,
        "summary": summary,
        "verdict": verdict(summary),
        "reader_only_on_the_driver": {
            "what": "read_source + redirect filter over the same input on one core: the "
            "pages/s one driver can feed before any cleaning or storing",
            "rounds": reader,
            "pages_per_s": spread([r["pages_per_s"] for r in reader]),
        },
        "ray_empty_task": {"what": "a no-op task on the cluster (1 CPU) from a driver on "
                           "this machine: one at a time, and 500 submitted at once", **noop},
        "runs": runs,
        "wall_time_s": round(time.perf_counter() - started, 1),
    }


def print_report(results: dict[str, Any]) -> None:
    s, meta = results["summary"], results["meta"]
    print("\n" + "=" * 100)
    print(f"{meta['input']['articles']} articles ({meta['input']['xml_mb']} MB XML, "
          f"{meta['input']['bz2_mb']} MB bz2); {meta['cluster']['what']}")
    print(f"load average before {meta['loadavg_before']}, after {meta['loadavg_after']} "
          f"({meta['machine']['cpu_count']} cores, shared)")
    print(f"{'':8}{'pages/s':>22}{'per core':>22}{'efficiency':>22}{'pages/CPU-s':>22}")
    for engine in ENGINES:
        e = s[engine]

        def cell(key: str, e: dict[str, Any] = e) -> str:
            if key not in e:
                return f"{'-':>22}"
            v = e[key]
            return f"{v['median']:>9.2f} ({v['min']:.2f}-{v['max']:.2f})".rjust(22)

        print(f"{engine:8}{cell('pages_per_s')}{cell('pages_per_s_per_core')}"
              f"{cell('parallel_efficiency')}{cell('pages_per_cpu_s')}")
    print(f"reader alone on the driver: {results['reader_only_on_the_driver']['pages_per_s']}")
    print(f"Ray empty task: {results['ray_empty_task']}")
    print(f"warm-up CLI store equals the pool's: {meta['warm_up']['cli_store_equals_pool']}")
    print(f"\nVERDICT: {results['verdict']}")
    print(f"wall time {results['wall_time_s']:.0f} s; JSON: {results['results_path']}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=20,
                        help="copies of the sample's 106 articles in the input (default 20)")
    parser.add_argument("--workers", type=int, default=2,
                        help="worker cores for the pool and for the cluster (default 2)")
    parser.add_argument("--nodes", type=int, default=2,
                        help="Ray worker nodes sharing --workers CPUs (default 2)")
    parser.add_argument("--repeats", type=int, default=3, help="measured rounds (default 3)")
    parser.add_argument("--dump", type=Path, default=DUMP_PATH, help="the sample dump")
    parser.add_argument("--output", type=Path, default=RESULTS_PATH, help="JSON results path")
    parser.add_argument("--child", choices=("serial", "pool", "ray", "reader", "noop"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--input", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--store", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args)
    if args.workers % args.nodes:
        parser.error("--workers must be a multiple of --nodes")
    if not args.dump.exists():
        print(f"error: {args.dump} does not exist (the sample dump lives in ../shared/data)",
              file=sys.stderr)
        return 2
    # SIGTERM unwinds like Ctrl-C, so the cluster is stopped either way.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with tempfile.TemporaryDirectory(prefix="fwray-") as tmp:
        try:
            results = measure(args, Path(tmp))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    results["results_path"] = str(args.output.relative_to(REPO) if args.output.is_relative_to(
        REPO) else args.output)
    args.output.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print_report(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
