#!/usr/bin/env python
"""Embedding on a real local Ray cluster against the local embedder, same run (issue 36).

Run from the repository root, on a quiet machine::

    .venv/bin/python experiments/ray_embedding.py [--passages 1500] [--repeats 2]

**The cluster** is ``experiments/ray_cluster.py``'s: a head node with no CPUs and
``--nodes`` worker nodes (separate raylets and object stores on this machine, token
authentication), started with Ray's own CLI and stopped by process id.

**The input.** ``--passages`` real passages drawn with a seeded generator from the real
corpus of ``experiments/retrieval.py`` (the WikiChat topic leads and WikiContradict
paragraphs).

**What is measured**, per runtime (``torch``, the default, and ``onnx``), each run in a fresh
subprocess with an empty embedding cache: ``local`` (the embedder as a local ``index build``
runs it, one thread per worker core of the cluster) and ``ray``
(:func:`freshwiki.retrieval.embed_on_ray` on the cluster, one actor per worker CPU). Rounds
alternate local and ray after one unmeasured warm-up of each (which starts Ray's workers
and, for ``onnx``, exports the model once). Timed: the embedding call alone (connecting to
the cluster apart). Reported: passages/s, per worker core, and ray/local per core per round
(same cores: the throughput ratio); the goal is >= 0.8. Every run's vectors are hashed:
for ``onnx`` local and ray must be identical to the bit; for ``torch`` their largest
difference is reported.

The machine has 2 cores; the head node, the driver and Ray's own processes share them with
the two worker CPUs, which a real cluster would not. Results:
``experiments/results/ray_embedding.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from _provenance import data_provenance, write_result
from ray_cluster import LocalRayCluster, loadavg, log

ROOT = Path(__file__).resolve().parent
RESULT = ROOT / "results" / "ray_embedding.json"
GOAL = 0.8
RUNTIMES = ("torch", "onnx")


def passages(count: int) -> list[Any]:
    from retrieval import load_real

    every = load_real(1000).passages
    return random.Random(0).sample(every, min(count, len(every)))


def child(args: argparse.Namespace) -> int:
    """One measured embedding run: JSON with the time and the vectors' digest."""
    from freshwiki.retrieval import Embedder, EmbeddingCache, embed_on_ray, runtime_name

    items = passages(args.passages)
    models = Path(args.models)
    result: dict[str, Any] = {}
    cache = EmbeddingCache(Path(args.cache), model=runtime_name(args.runtime))
    if args.child == "ray":
        import ray

        t0 = time.perf_counter()
        ray.init(address=args.address, include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
        result["connect_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        computed, _ = embed_on_ray(items, cache, runtime=args.runtime, models_dir=models)
        result["wall_s"] = time.perf_counter() - t0
        ray.shutdown()
    else:
        embedder = Embedder(None, runtime=args.runtime, models_dir=models,
                            threads=args.cores)
        embedder.encode([p.indexed_text for p in items[:8]])  # load the weights first
        t0 = time.perf_counter()
        vectors = embedder.encode([p.indexed_text for p in items])
        result["wall_s"] = time.perf_counter() - t0
        cache.put([p.id for p in items], [p.indexed_text for p in items], vectors)
        computed = len(items)
    stored = cache.get([p.id for p in items], [p.indexed_text for p in items])
    matrix = np.stack([stored[i] for i in range(len(items))])
    np.save(args.cache + ".npy", matrix)
    result.update(passages=computed,
                  sha256=hashlib.sha256(matrix.tobytes()).hexdigest())
    print(json.dumps(result))
    return 0


def spawn(args: argparse.Namespace, cluster: LocalRayCluster, mode: str, runtime: str,
          scratch: Path, tag: str) -> dict[str, Any]:
    cache = scratch / f"{tag}.sqlite"
    cmd = [sys.executable, __file__, "--child", mode, "--runtime", runtime,
           "--passages", str(args.passages), "--cores", str(args.workers),
           "--address", cluster.address, "--cache", str(cache),
           "--models", str(scratch / "models")]
    done = subprocess.run(cmd, capture_output=True, text=True, env=cluster.env, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"{mode} {runtime} failed:\n{done.stderr[-3000:]}")
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    out["vectors"] = np.load(str(cache) + ".npy")
    for path in scratch.glob(f"{tag}.sqlite*"):
        path.unlink()
    return out


def measure(args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
    cluster = LocalRayCluster(scratch / "ray", nodes=args.nodes,
                              cpus_per_node=args.workers // args.nodes)
    cluster.root.mkdir()
    runs: list[dict[str, Any]] = []
    differences: dict[str, float] = {}
    load0 = loadavg()
    try:
        cluster.start()
        for runtime in RUNTIMES:
            log(f"warm-up ({runtime}, unmeasured)")
            spawn(args, cluster, "local", runtime, scratch, "warm-local")
            spawn(args, cluster, "ray", runtime, scratch, "warm-ray")
            biggest = 0.0
            for n in range(1, args.repeats + 1):
                got = {}
                for mode in (("local", "ray") if n % 2 else ("ray", "local")):
                    out = spawn(args, cluster, mode, runtime, scratch, f"{runtime}-{mode}-{n}")
                    got[mode] = out
                    runs.append({"runtime": runtime, "round": n, "mode": mode,
                                 "wall_s": round(out["wall_s"], 3),
                                 "passages": out["passages"],
                                 "per_s": round(out["passages"] / out["wall_s"], 1),
                                 "per_core": round(out["passages"] / out["wall_s"]
                                                   / args.workers, 1),
                                 "connect_s": round(out.get("connect_s", 0.0), 3),
                                 "vectors_sha256": out["sha256"], "loadavg": loadavg()})
                    log(f"{runtime} round {n} {mode:5} {runs[-1]['per_s']:7.1f} passages/s")
                biggest = max(biggest, float(np.abs(got["local"]["vectors"]
                                                    - got["ray"]["vectors"]).max()))
            differences[runtime] = biggest
    finally:
        cluster.stop()
    summary: dict[str, Any] = {}
    for runtime in RUNTIMES:
        mine = [r for r in runs if r["runtime"] == runtime]
        ratios = []
        for n in range(1, args.repeats + 1):
            by = {r["mode"]: r for r in mine if r["round"] == n}
            ratios.append(by["ray"]["per_s"] / by["local"]["per_s"])
        summary[runtime] = {
            "ray_over_local_per_core": [round(x, 3) for x in ratios],
            "median": round(statistics.median(ratios), 3),
            "goal_met": statistics.median(ratios) >= GOAL,
            "local_per_core": statistics.median(
                [r["per_core"] for r in mine if r["mode"] == "local"]),
            "ray_per_core": statistics.median(
                [r["per_core"] for r in mine if r["mode"] == "ray"]),
            "largest_vector_difference": differences[runtime],
            "vectors_identical": len({r["vectors_sha256"] for r in mine}) == 1,
        }
    return {"cluster": {"nodes": args.nodes, "worker_cpus": args.workers,
                        "what": "head (0 CPUs) + worker nodes, separate raylets and object "
                        "stores, one 2-core machine"},
            "passages": args.passages, "repeats": args.repeats, "goal": GOAL,
            "loadavg_before": load0, "loadavg_after": loadavg(),
            "summary": summary, "runs": runs}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--passages", type=int, default=1500)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2, help="worker CPUs in all")
    parser.add_argument("--out", type=Path, default=RESULT)
    parser.add_argument("--child", choices=("local", "ray"), help=argparse.SUPPRESS)
    parser.add_argument("--runtime", help=argparse.SUPPRESS)
    parser.add_argument("--cores", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    parser.add_argument("--cache", help=argparse.SUPPRESS)
    parser.add_argument("--models", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args)
    with tempfile.TemporaryDirectory(prefix="fw-ray-embed-") as tmp:
        result = measure(args, Path(tmp))
    for runtime, s in result["summary"].items():
        print(f"{runtime}: ray/local per core {s['median']} (rounds "
              f"{s['ray_over_local_per_core']}; goal {GOAL}: "
              f"{'met' if s['goal_met'] else 'not met'}); vectors identical "
              f"{s['vectors_identical']}, largest difference "
              f"{s['largest_vector_difference']:.2g}")
    data = data_provenance({"real": 1.0}, sample="n/a (a speed figure; nothing tuned)",
                           sources="../shared/data/wikipedia/topics and "
                           "../shared/data/wikicontradict, CC BY-SA")
    write_result(args.out, result, data=data)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    raise SystemExit(main())
