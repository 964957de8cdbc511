"""What the rules can still observe of a counter: the thresholds its comparisons use.

A loop need not repeat states exactly (DESIGN §3): a mandatory drain against a
player who can't lose sends that life total down forever. Two states of a cycle
*match* when they agree on everything a rule can tell apart: every variable is
equal, except counters that moved by some amount and stay, on every state of the
cycle, beyond every threshold any rule compares them with (below all of them when
they go down, above all of them when they go up). Such a cycle repeats forever
with the same rules firing, since each guard keeps its value and each counter is
only ever changed by adding to it.

A counter that a rule uses any other way (compared with another variable, copied
into another variable, multiplied) is fully observed: it must repeat exactly.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from verify.language.expr import Assign, Binary, Call, ForAll, Ite, Lit, Unary, Var, children, substitute
from verify.model.state import Layout, State
from verify.model.types import Config, Model

__all__ = ["Drift", "fixed_values", "game_drift"]

_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


@dataclass(frozen=True)
class Drift:
    """For each integer variable a rule compares only with constants: (low, high), the
    values at or below (above) which no comparison changes its outcome any more."""

    safe: Mapping[str, tuple[int | None, int | None]]

    @classmethod
    def of(cls, model: Model, params: Mapping[str, int], fixed: Mapping[str, frozenset[str]] | None = None,
           extra: Iterable[tuple[Any, Any]] = ()) -> "Drift":
        """*fixed*: the values each fixed enumerated variable can take in the configuration (e.g.
        ``variant``, a card's ``effect``): a conjunction that compares one with a value it never has
        can never hold, so what it compares is not observed (704.6a's team life total is no
        threshold in a standard game, nor 'highest life total' where no card says so).
        *extra*: (premise, conclusion) pairs that observe states and steps as guards do: the
        properties checked on an explored graph (one whose premise the fixed values make false is
        never asked)."""
        ints = {n for n, d in model.vocab.vars.items() if d.type == "int" and not d.fixed}
        known = dict(fixed or {})

        def dead(e: Any) -> bool:
            """Whether *e* is a conjunction one of whose parts the fixed values make false: a fixed
            variable compared with a value none of its slots has (or unequal to the one they all have)."""
            if not (isinstance(e, Binary) and e.op == "and"):
                if not (isinstance(e, Binary) and e.op in ("==", "!=") and isinstance(e.left, Var)
                        and e.left.name in known and isinstance(e.right, Var) and e.right.index is None
                        and e.right.card is None):
                    return False
                values = known[e.left.name]
                return e.right.name not in values if e.op == "==" else values == {e.right.name}
            return dead(e.left) or dead(e.right)
        lows: dict[str, list[int]] = {n: [] for n in ints}
        highs: dict[str, list[int]] = {n: [] for n in ints}
        observed: set[str] = set()

        def const(e: Any) -> int | None:
            if isinstance(e, Lit) and not isinstance(e.value, bool):
                return int(e.value)
            if isinstance(e, Var) and e.index is None and e.name in params:
                return params[e.name]
            if isinstance(e, Unary) and e.op == "-":
                c = const(e.arg)
                return None if c is None else -c
            return None

        def term(e: Any) -> tuple[Var, int] | None:
            """x[i] + k or x[i] - k, for a counter x: (x[i], k)."""
            if isinstance(e, Var) and e.name in ints:
                return e, 0
            if isinstance(e, Binary) and e.op in ("+", "-"):
                inner, c = term(e.left), const(e.right)
                if inner is not None and c is not None:
                    return inner[0], inner[1] + (c if e.op == "+" else -c)
                if e.op == "+":
                    inner, c = term(e.right), const(e.left)
                    if inner is not None and c is not None:
                        return inner[0], inner[1] + c
            return None

        def shifted(e: Any) -> tuple[Var, list[Any]] | None:
            """x[i] (primed or not) plus or minus terms that read no counter: (x[i], those terms)."""
            if isinstance(e, Var) and e.name in ints:
                return e, []
            if isinstance(e, Binary) and e.op in ("+", "-"):
                inner = shifted(e.left)
                if inner is not None and not reads(e.right):
                    return inner[0], inner[1] + [e.right]
                if e.op == "+":
                    inner = shifted(e.right)
                    if inner is not None and not reads(e.left):
                        return inner[0], inner[1] + [e.left]
            return None

        def reads(e: Any) -> bool:
            return (isinstance(e, Var) and e.name in ints) or any(reads(c) for c in children(e))

        def indices(v: Var) -> None:
            """A counter's seat and card indices are read as any expression is."""
            for idx in (v.index, v.card):
                if idx is not None:
                    visit(idx, None)

        def visit(e: Any, self_var: str | None) -> None:
            """Walk *e*; *self_var* is the counter being assigned when e is its new value."""
            if isinstance(e, Binary) and e.op == "and" and dead(e):
                return
            if isinstance(e, Ite) and dead(e.cond):  # only the other branch is ever evaluated
                visit(e.other, self_var)
                return
            if isinstance(e, Binary) and e.op in _FLIP:
                a, b = shifted(e.left), shifted(e.right)
                if (a is not None and b is not None and a[0].primed != b[0].primed
                        and (a[0].name, a[0].index, a[0].card) == (b[0].name, b[0].index, b[0].card)):
                    # x' op x + d: the same counter before and after a step; moving both by the same
                    # amount changes nothing (d may not itself read a counter)
                    for var, rest in (a, b):
                        indices(var)
                        for r in rest:
                            visit(r, None)
                    return
                for side, other, op in ((e.left, e.right, e.op), (e.right, e.left, _FLIP[e.op])):
                    t, c = term(side), const(other)
                    if t is not None and c is not None:
                        var, k = t
                        c -= k  # x + k op c  <=>  x op c - k
                        lo, hi = {"<": (c - 1, c), "<=": (c, c + 1), ">": (c, c + 1), ">=": (c - 1, c),
                                  "==": (c - 1, c + 1), "!=": (c - 1, c + 1)}[op]
                        lows[var.name].append(lo)
                        highs[var.name].append(hi)
                        indices(var)
                        return
            if isinstance(e, Var) and e.name in ints:
                if e.name != self_var:
                    observed.add(e.name)
                indices(e)
                return
            if self_var is not None and isinstance(e, Binary) and e.op in ("+", "-"):
                # x := x + e / x - e keeps x a translation; e itself is observed normally
                if isinstance(e.left, Var) and e.left.name == self_var:
                    visit(e.left, self_var)
                    visit(e.right, None)
                    return
                if e.op == "+" and isinstance(e.right, Var) and e.right.name == self_var:
                    visit(e.right, self_var)
                    visit(e.left, None)
                    return
            if isinstance(e, Call) and e.func in model.vocab.preds and model.vocab.preds[e.func].expanded:
                # an expanded predicate observes what its clauses and exceptions do with the arguments
                values = dict(zip(model.vocab.preds[e.func].params, e.args))
                for r in model.clauses(e.func) + model.exceptions(e.func):
                    visit(substitute(r.when, values), None)
                return
            if self_var is not None and isinstance(e, Ite):
                visit(e.cond, None)
                visit(e.then, self_var)
                visit(e.other, self_var)
                return
            for child in children(e):
                visit(child, None)

        for when, then in extra:
            if not dead(when):
                visit(when, None)
                visit(then, None)
        for rule in model.rules:
            if dead(rule.when):
                continue  # never fires in this configuration
            visit(rule.when, None)
            for stmt in rule.then:
                for a in (stmt.body if isinstance(stmt, ForAll) else (stmt,)):
                    assert isinstance(a, Assign)
                    indices(a.target)
                    visit(a.value, a.target.name)
        safe = {x: (min(lows[x]) if lows[x] else None, max(highs[x]) if highs[x] else None)
                for x in sorted(ints - observed)}
        return cls(safe)

    def matches(self, layout: Layout, cycle: list[State]) -> bool:
        """Whether the cycle's last state matches its first up to counters drifting past every
        threshold (all of the cycle's states beyond them)."""
        first, last = cycle[0], cycle[-1]
        for k in range(len(first)):
            if first[k] == last[k]:
                continue
            bound = self.safe.get(layout.var_of(k))
            if bound is None or layout.types[k] != "int":
                return False
            lo, hi = bound
            if last[k] < first[k]:
                if lo is not None and any(s[k] > lo for s in cycle):
                    return False
            elif hi is not None and any(s[k] < hi for s in cycle):
                return False
        return True


def fixed_values(model: Model, config: Config) -> dict[str, frozenset[str]]:
    """For each fixed enumerated variable, the values any of its slots can take in *config*
    (a game variable's first value, a card's or seat's default, when the configuration gives none)."""
    out: dict[str, frozenset[str]] = {}
    enums = model.vocab.enums
    for v in model.vocab.vars.values():
        if not v.fixed or v.type not in enums or v.scope == "player_card":
            continue
        default = (enums[v.type][0],)
        base = config.init.get(v.name)
        shared = base.explicit() if base is not None else default
        if v.scope == "game":
            values = set(shared)
        elif v.scope == "player":
            seats = [config.seats.get(p, {}).get(v.name) for p in range(max(config.players, default=0))]
            values = {x for s in seats for x in (s.explicit() if s is not None else shared)}
        else:
            values = {x for card in config.cards for x in (card[v.name].explicit() if v.name in card else shared)}
        out[v.name] = frozenset(str(x) for x in values)
    return out


def game_drift(model: Model, config: Config) -> Drift:
    """The counters of *config*'s games that may drift past every threshold the rules and the
    properties compare them with: exploration takes a state for an earlier one it matches up to
    them, so a loop whose counters run away closes (verify.explicit.folding; not under rotation,
    nor where the bounds are the whole game)."""
    return Drift.of(model, config.params, fixed_values(model, config), extra=[(p.when, p.then) for p in model.properties])
