"""One situation under two rule sets (``verify diff A B --scenario FILE``): the scenario is
played under each; every outcome one reaches and the other does not is shown beside the other's
outcome whose game follows it longest, blamed on the rule where the two games part."""
from __future__ import annotations

from pathlib import Path

from verify.checking.blame import Blame
from verify.checking.differences import Difference, DiffResult, GameDiff, shared_steps
from verify.model.types import Model
from verify.scenarios.format import load_scenario
from verify.scenarios.simulate import Outcome, simulate

__all__ = ["diff_scenario"]


def diff_scenario(ma: Model, mb: Model, a: str, b: str, path: Path | str,
                  memory_mb: int | None = None, timeout: float | None = None) -> DiffResult:
    """The outcomes of the scenario at *path* under *ma* and *mb*, and where they part."""
    sa, sb = load_scenario(path, ma), load_scenario(path, mb)
    ra = simulate(ma, sa, memory_mb=memory_mb, timeout=timeout)
    rb = simulate(mb, sb, memory_mb=memory_mb, timeout=timeout)
    out = DiffResult(a, b)
    by_a = {o.label: o for o in ra.outcomes}
    by_b = {o.label: o for o in rb.outcomes}
    blame = Blame(ma, mb)
    name = Path(path).stem
    shown: set[tuple[str, str]] = set()
    for side, mine, other, mx, my in (("A", by_a, by_b, ma, mb), ("B", by_b, by_a, mb, ma)):
        for label in sorted(mine.keys() - other.keys()):
            o = mine[label]
            twin: Outcome | None = max(other.values(), key=lambda t: shared_steps(o.trace, t.trace), default=None)
            if twin is None:
                continue
            pair = (label, twin.label) if side == "A" else (twin.label, label)
            if pair in shown:  # the other side's outcome, already shown against this one
                continue
            shown.add(pair)
            part = shared_steps(o.trace, twin.trace)
            steps = o.trace.steps if part < len(o.trace.steps) else twin.trace.steps
            model = mx if part < len(o.trace.steps) else my
            number = steps[part].rule if part < len(steps) else ""
            rule, how = blame.attribute(model.edition.key(number) if number else "", "its guard or effect")
            ta, tb = (o.trace, twin.trace) if side == "A" else (twin.trace, o.trace)
            results = (tuple(sorted(by_a)), tuple(sorted(by_b)))
            out.differences.append(Difference(rule or "(the same play ends otherwise)", *blame.numbers(rule), how, label,
                                              side, *results, ta, tb, part, (f"scenario {name}",), 1))
    # the same outcomes, but play that one side allows and the other never reaches on the way
    for side, sim, other_sim, mx in (("A", ra, rb, ma), ("B", rb, ra, mb)):
        seen = set(other_sim.graph.nodes)
        for o in sim.outcomes:
            fresh = next((i for i, st in enumerate(o.trace.states) if st not in seen), None)
            if fresh is None or fresh == 0:
                continue
            number = o.trace.steps[fresh - 1].rule
            rule, how = blame.attribute(mx.edition.key(number), "its guard or effect")
            if any(d.rule == rule for d in out.differences):
                continue
            twin = max(other_sim.outcomes, key=lambda t: shared_steps(o.trace, t.trace))
            ta, tb = (o.trace, twin.trace) if side == "A" else (twin.trace, o.trace)
            out.differences.append(Difference(rule, *blame.numbers(rule), how, "a state of play", side, (), (), ta, tb,
                                              fresh - 1, (f"scenario {name}",), 1))
    out.games.append(GameDiff(f"scenario {name}", sa.n, ra.states, rb.states, 1,
                              int(by_a.keys() != by_b.keys()),
                              all(o.kind != "unknown" for o in ra.outcomes + rb.outcomes), False))
    return out
