"""Explicit explorer throughput and memory on the bundled model.

For each configuration and player count, prints the states and steps found,
the best wall time of a few runs, states per second, and the bytes each state
costs while the graph is alive (measured with tracemalloc in a separate run,
since tracing slows allocation down). The same is measured for building a
networkx.DiGraph from the flat edge arrays with ``to_networkx``.

Run from the repository root: ``python bench/explorer.py``.
"""
from __future__ import annotations

import gc
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Callable, TypeVar

# Measure this checkout even when an older copy of the package is installed.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from verify.explicit.explore import StateGraph, explore, to_networkx  # noqa: E402
from verify.model.loader import load_model  # noqa: E402

T = TypeVar("T")

REPEAT = 3
TARGET_RATE = 20_000  # states per second
TARGET_BYTES = 1024  # bytes per state


def best_time(build: Callable[[], T], repeat: int = REPEAT) -> tuple[T, float]:
    """The last result of *build* and its fastest wall time over *repeat* runs."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        result = build()
        best = min(best, time.perf_counter() - start)
    return result, best


def traced_bytes(build: Callable[[], T]) -> tuple[T, int]:
    """The result of *build* and the bytes it still holds once built."""
    gc.collect()
    tracemalloc.start()
    try:
        result = build()
        gc.collect()
        current, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, current


def main() -> None:
    m = load_model()
    header = (f"{'config':<12} {'players':>7} {'states':>8} {'steps':>8} {'seconds':>8} {'states/s':>9} "
              f"{'B/state':>8} | {'nx s':>7} {'nx B/state':>10}")
    print(header)
    print("-" * len(header))
    total_states = 0
    total_seconds = 0.0
    total_bytes = 0
    total_nx_bytes = 0
    for c in m.configs:
        for n in c.players:
            if not c.explores(n):
                continue  # player counts only Z3 checks
            g, seconds = best_time(lambda: explore(m, c, n))
            states = len(g.states)
            steps = len(g.src)
            del g
            traced, nbytes = traced_bytes(lambda: explore(m, c, n))
            del traced
            graph: StateGraph = explore(m, c, n)
            _nx, nx_seconds = best_time(lambda: to_networkx(graph))
            del _nx
            nxg, nx_bytes = traced_bytes(lambda: to_networkx(graph))
            del nxg, graph
            total_states += states
            total_seconds += seconds
            total_bytes += nbytes
            total_nx_bytes += nx_bytes
            print(f"{c.name:<12} {n:>7} {states:>8,} {steps:>8,} {seconds:>8.3f} {states / seconds:>9,.0f} "
                  f"{nbytes / states:>8,.0f} | {nx_seconds:>7.3f} {nx_bytes / states:>10,.0f}")
    print("-" * len(header))
    print(f"{'all':<12} {'':>7} {total_states:>8,} {'':>8} {total_seconds:>8.3f} "
          f"{total_states / total_seconds:>9,.0f} {total_bytes / total_states:>8,.0f} | "
          f"{'':>7} {total_nx_bytes / total_states:>10,.0f}")
    print()
    print(f"seconds: best of {REPEAT} runs; B/state: tracemalloc bytes held by the graph after "
          f"explore (separate run); nx: to_networkx on top of the graph")
    print(f"targets: >= {TARGET_RATE:,} states/s, <= {TARGET_BYTES:,} B/state "
          f"(a graph with per-edge attribute dicts: ~2.5 KB/state)")


if __name__ == "__main__":
    main()
