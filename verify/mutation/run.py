"""Run the checks on every mutant: the case library first (cheap), then the properties, game
by game, stopping at the first check that the mutant fails.

A mutant is *killed* when ``verify all`` on it would not give what it gives on the model:
a scenario ends otherwise than its ruling says (or unknown), or a property's verdict
changes (violated, unknown, vacuous where it held). The properties are checked by explicit
exploration within each configuration's bounds (no Z3: a mutant only Z3 would catch counts
as a survivor, so the score errs low); the rotation proof is skipped (no symmetry reduction).
A mutant that makes the checker itself fail is reported apart, as an error.
"""
from __future__ import annotations

import multiprocessing
import os
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from verify.checking.runner import Options, check
from verify.checking.verdict import Verdict
from verify.explicit.relevance import live_rules
from verify.model.types import Config, Model
from verify.mutation.operators import Mutant, apply
from verify.mutation.report import Outcome
from verify.scenarios.cache import fired
from verify.scenarios.format import Scenario
from verify.scenarios.library import CaseResult
from verify.scenarios.simulate import simulate, wanted

__all__ = ["Baseline", "baseline", "judge", "run_mutants"]


@dataclass(frozen=True)
class Baseline:
    """What the unmutated model gives: each property's verdict over all games and on each
    configuration's games, and the configurations in the order the mutants are checked on them
    (fewest states first)."""

    verdicts: dict[str, Verdict]
    configs: tuple[str, ...]
    per_config: dict[str, dict[str, list[Verdict]]]


def _options(config: str) -> Options:
    return Options(engine="explicit", configs=(config,), symmetry=False)


def _overall(per_config: Iterable[Verdict]) -> Verdict:
    """A property's verdict over several configurations' explicit verdicts (as the runner combines
    them: a counterexample or an unknown anywhere decides; vacuous only where every game is)."""
    vs = list(per_config)
    for v in (Verdict.VIOLATED, Verdict.UNKNOWN):
        if v in vs:
            return v
    if vs and all(v is Verdict.VACUOUS for v in vs):
        return Verdict.VACUOUS
    return Verdict.BOUNDED if Verdict.BOUNDED in vs else Verdict.HOLDS


def baseline(model: Model, configs: Sequence[str] | None = None) -> Baseline:
    names = list(configs) if configs else [c.name for c in model.configs]
    per: dict[str, list[Verdict]] = {p.id: [] for p in model.properties}
    per_config: dict[str, dict[str, list[Verdict]]] = {}
    cost: dict[str, float] = {}
    for name in names:
        start = time.perf_counter()
        per_config[name] = {p.id: [] for p in model.properties}
        for r in check(model, model.properties, _options(name)):
            per[r.property_id].append(r.verdict)
            per_config[name][r.property_id].append(r.verdict)
        cost[name] = time.perf_counter() - start
    return Baseline({p: _overall(vs) for p, vs in per.items()}, tuple(sorted(names, key=lambda n: cost[n])), per_config)


def judge(model: Model, mutant: Mutant, base: Baseline, scenarios: Sequence[Scenario]) -> Outcome:
    start = time.perf_counter()
    try:
        status, by, detail = _judge(model, mutant, base, scenarios)
    except Exception as err:  # the mutant broke the checker: reported apart, with where
        frame = traceback.extract_tb(err.__traceback__)[-1]
        status, by, detail = "error", type(err).__name__, f"{err} ({os.path.basename(frame.filename)}:{frame.lineno})"
    return Outcome(mutant, status, by, detail, time.perf_counter() - start)


def _dead_in(model: Model, mm: Model, rule_id: str, name: str) -> bool:
    """Whether the mutated rule is dead in every game of configuration *name*, before and after
    the mutation (verify.explicit.relevance): those games are the model's own, verdicts and all."""
    return _dead(model, mm, rule_id, model.config(name), model.config(name).players)


def _dead(model: Model, mm: Model, rule_id: str, config: Config, counts: Iterable[int]) -> bool:
    """Whether the rule is dead in the games of *config* at each of *counts* players, in the model
    and in the mutant (verify.explicit.relevance)."""
    among = frozenset((rule_id,))
    return not any(live_rules(m, config, n, among) for m in (model, mm) for n in counts)


def _dead_for(model: Model, mm: Model, rule_id: str, sc: Scenario) -> bool:
    """Whether the mutated rule is dead in *sc*'s game, before and after the mutation: its start's
    fixed values hold all through it (events fire rules, and no rule assigns a fixed variable), so
    it plays as on the model itself. An event that fires the rule itself (with its own parameters,
    and an optional rule whether or not the configuration lists it) always counts as live."""
    return rule_id not in fired(sc) and _dead(model, mm, rule_id, sc.config, (sc.n,))


def _judge(model: Model, mutant: Mutant, base: Baseline, scenarios: Sequence[Scenario]) -> tuple[str, str, str]:
    """The first check that catches *mutant*, or why none did. The scenarios are the ones the model
    itself plays as expected (the command checks that first): one where the mutated rule is dead,
    before and after, plays as it did and is not played again."""
    mm = apply(model, mutant)
    skipped = 0
    for sc in scenarios:
        if _dead_for(model, mm, mutant.rule, sc):
            skipped += 1
            continue
        case = CaseResult(simulate(mm, sc))  # judged as verify all judges it
        if not case.ok:
            got = "; ".join(case.sim.labels + tuple(case.sim.state_misses))
            return "killed", f"scenario {case.name}", f"expected {wanted(case.sim)}, got {got} ({case.status})"
    per: dict[str, list[Verdict]] = {p.id: [] for p in mm.properties}
    reused = 0
    for name in base.configs:
        if _dead_in(model, mm, mutant.rule, name):
            reused += 1
            for pid, vs in base.per_config[name].items():
                per[pid] += vs
            continue
        for r in check(mm, mm.properties, _options(name)):
            per[r.property_id].append(r.verdict)
            if r.verdict in (Verdict.VIOLATED, Verdict.UNKNOWN) and base.verdicts[r.property_id] is not r.verdict:
                return "killed", f"property {r.property_id} on {name}", f"{r.verdict.value}: {r.method}"
    for pid, vs in per.items():
        v = _overall(vs)
        if v is not base.verdicts[pid]:
            return "killed", f"property {pid}", f"{v.value} (was {base.verdicts[pid].value})"
    dead = f"; {reused} where the rule is dead, before and after, as they were" if reused else ""
    unplayed = f" ({skipped} where the rule is dead, before and after, as they were)" if skipped else ""
    return ("survived", "", f"{len(scenarios)} scenarios as expected{unplayed}; {len(per)} properties as before on "
            f"{len(base.configs)} configuration{'s' if len(base.configs) != 1 else ''} (explicit exploration{dead})")


# -- in parallel -------------------------------------------------------------------------

_SHARED: tuple[Model, Sequence[Mutant], Baseline, Sequence[Scenario]] | None = None


def _work(index: int) -> Outcome:
    assert _SHARED is not None
    model, ms, base, scenarios = _SHARED
    return judge(model, ms[index], base, scenarios)


def run_mutants(model: Model, ms: Sequence[Mutant], base: Baseline, scenarios: Sequence[Scenario], jobs: int = 1,
                progress: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Judge every mutant, in *jobs* processes (forked: they share the model and the baseline)."""
    global _SHARED
    _SHARED = (model, ms, base, scenarios)
    out: list[Outcome] = []
    try:
        if jobs <= 1 or len(ms) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
            for i in range(len(ms)):
                out.append(_work(i))
                if progress:
                    progress(out[-1])
            return out
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            for done in as_completed([pool.submit(_work, i) for i in range(len(ms))]):
                out.append(done.result())
                if progress:
                    progress(out[-1])  # as each finishes: a slow mutant holds nothing up
        return sorted(out, key=lambda o: o.mutant.number)
    finally:
        _SHARED = None
