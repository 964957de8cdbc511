"""Wall time of checking every bundled property on every bundled configuration.

Times ``verify.runner.check`` with both engines (the default), then with the
explicit engine alone and Z3 alone, REPEAT times each, and prints the min and
median with the verdict counts. Then runs ``verify all --no-reports`` once as
a subprocess (``python -m verify.cli``, so start-up and model loading count)
and prints its wall time and exit code.

Run from the repository root: ``python bench/verify_all.py``.
"""
from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Measure this checkout even when an older copy of the package is installed.
sys.path.insert(0, str(ROOT))

from verify.checking.runner import Options, check  # noqa: E402
from verify.model.loader import load_model  # noqa: E402

REPEAT = 3
ENGINE_OPTIONS = {
    "both (default)": Options(),
    "explicit": Options(engine="explicit"),
    "z3": Options(engine="z3"),
}


def main() -> None:
    m = load_model()
    print(f"{len(m.properties)} properties, configurations: "
          + ", ".join(f"{c.name} {list(c.players)}" for c in m.configs))
    print()
    header = f"{'engine':<16} {'min s':>8} {'median s':>9}  verdicts"
    print(header)
    print("-" * len(header))
    for label, options in ENGINE_OPTIONS.items():
        times: list[float] = []
        verdicts: Counter[str] = Counter()
        for _ in range(REPEAT):
            start = time.perf_counter()
            results = check(m, m.properties, options)
            times.append(time.perf_counter() - start)
            verdicts = Counter(r.verdict.value for r in results)
        summary = ", ".join(f"{v} {k}" for k, v in sorted(verdicts.items()))
        print(f"{label:<16} {min(times):>8.2f} {statistics.median(times):>9.2f}  {summary}", flush=True)
    print(f"(library calls, {REPEAT} runs each, model loaded once)")
    print()
    cmd = [sys.executable, "-m", "verify.cli", "all", "--no-reports"]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    print(f"CLI `python -m verify.cli all --no-reports`: {seconds:.2f} s, exit code {proc.returncode}")
    if proc.stderr.strip():
        print("stderr:", proc.stderr.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
