"""JSON writers: traces in the Informal Trace Format (ITF), readable without Endgame's model,
and the run's results and scenario outcomes around them."""
from __future__ import annotations

from typing import Any, Callable, Iterable

from verify.checking.trace import Trace
from verify.checking.verdict import CheckResult, Verdict
from verify.model.state import Layout
from verify.scenarios.library import CaseResult
from verify.scenarios.simulate import Simulation

__all__ = ["trace_itf", "results_json", "scenario_json"]


def _bigint(v: Any) -> object:
    """An integer as ITF writes it, a big integer: {"#bigint": "-1"} (ITF's rule since its 2023
    revision: JSON numbers lose precision in many readers). One object per value, shared by every
    state that holds it (a report writes hundreds of thousands; none is changed once made)."""
    hit = _BIGINTS.get(v)
    if hit is None:
        hit = _BIGINTS[v] = {"#bigint": str(int(v))}
    return hit


_BIGINTS: dict[Any, dict[str, str]] = {}


def _writers(lay: Layout) -> list[Callable[[Any], object]]:
    """How ITF writes each slot of *lay*: its plain value (:meth:`Layout.plain_of`), an integer as
    a big integer; chosen once per slot, not for every value of every state."""
    return [_bigint if w is int else w for w in map(lay.plain_of, range(len(lay.types)))]


def trace_itf(trace: Trace) -> dict[str, Any]:
    """The trace in the Informal Trace Format (Apalache's ADR-015): readable without Endgame's
    model. Variables are the layout's slots ('life[0]'), booleans and enumeration names as JSON
    booleans and strings, integers (players and cards by their numbers) as big integers."""
    lay = trace.layout
    names, writers = lay.names, _writers(lay)
    states: list[dict[str, Any]] = []
    for i, s in enumerate(trace.states):
        meta: dict[str, Any] = {"index": i}
        if i > 0:
            step = trace.steps[i - 1]
            meta.update({"rule": step.rule, "actor": step.actor, "card": (None if step.card is None else
                                                                          lay.cards[step.card]), "kind": step.kind,
                         "mandatory": step.mandatoriness, "because": list(step.because)})
        states.append({"#meta": meta, **dict(zip(names, [w(v) for w, v in zip(writers, s)]))})
    out: dict[str, Any] = {
        "#meta": {"format": "ITF", "source": "endgame", "property": trace.property_id, "role": trace.role,
                  "config": trace.config, "players": lay.n, "description": trace.message,
                  "point": trace.point},
        "vars": list(lay.names),
        "states": states,
    }
    if trace.loop_start is not None:
        out["loop"] = trace.loop_start
    return out


def results_json(results: Iterable[CheckResult], command: str, model_dir: str,
                 cases: Iterable[CaseResult] | None = None) -> dict[str, Any]:
    """Every property's verdict, traces and per-game results; with *cases*, the case library too
    (and "ok" is then false if a scenario did not end as its ruling says)."""
    def engine(e: Any) -> dict[str, Any]:
        d = {"engine": e.engine, "config": e.config, "players": e.players, "verdict": e.verdict.value,
             "method": e.method, "seconds": round(e.seconds, 4), "cached": e.cached}
        if e.trace is not None:
            d["trace"] = trace_itf(e.trace)
        if e.cti is not None:
            d["cti"] = trace_itf(e.cti)
        return d
    results = list(results)
    played = list(cases) if cases is not None else []
    out = {
        "command": command,
        "model": model_dir,
        "verdict": max((r.verdict for r in results), key=lambda v: v.rank, default=Verdict.HOLDS).value,
        "ok": all(r.ok for r in results) and all(c.ok for c in played),
        "properties": [
            {"id": r.property_id, "title": r.title, "protects": list(r.protects), "verdict": r.verdict.value,
             "ok": r.ok, "method": r.method, "seconds": round(r.seconds, 4),
             "trace": trace_itf(r.trace) if r.trace is not None else None,
             "witness": trace_itf(r.witness) if r.witness is not None else None,
             "engines": [engine(e) for e in r.results]}
            for r in results],
    }
    if cases is not None:
        out["scenarios"] = [{**scenario_json(c.sim), "result": c.status, "ok": c.ok, "cached": c.cached}
                            for c in played]
    return out


def scenario_json(sim: Simulation) -> dict[str, Any]:
    sc = sim.scenario
    return {
        "scenario": sc.path, "title": sc.title, "source": sc.source, "players": list(sc.players),
        "expect": list(sc.expect) if sc.expect is not None else None,
        "expect_state": [{"who": who, "variable": var, "value": value} for who, _, var, value, _ in sc.expect_state],
        "as_expected": sim.as_expected, "state_misses": sim.state_misses,
        "settled": sim.settled, "states": sim.states, "notes": sim.notes,
        "outcomes": [{"label": o.label, "kind": o.kind, "decided_by": list(o.decided_by), "why": o.why,
                      "trace": trace_itf(o.trace)} for o in sim.outcomes],
    }
