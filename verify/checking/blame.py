"""Which rules make two rule sets differ: those whose meaning differs (or that only one has),
and, for the rule on a step, the ones among them it reads through the predicates it uses."""
from __future__ import annotations

from verify.model.types import Model, Rule

__all__ = ["Blame"]


class Blame:
    """Which rules mean something else in A than in B (or exist in one only), by their current
    numbers; and, for a rule on a step, those among them it reads through the predicates it uses."""

    def __init__(self, ma: Model, mb: Model):
        def by_origin(m: Model) -> dict[str, Rule]:
            return {m.edition.key(r.id): r for r in m.rules}
        ra, rb = by_origin(ma), by_origin(mb)
        self.ids = ({k: r.id for k, r in ra.items()}, {k: r.id for k, r in rb.items()})
        self.differs = {k for k in ra.keys() | rb.keys()
                        if k not in ra or k not in rb or ra[k].meaning != rb[k].meaning}
        self.rules = {**rb, **ra}
        self.defines: dict[str, list[str]] = {}
        for k, r in list(rb.items()) + list(ra.items()):
            if r.defines is not None and k not in self.defines.get(r.defines, []):
                self.defines.setdefault(r.defines, []).append(k)

    def blame(self, rule: str) -> list[str]:
        """*rule* itself if its meaning differs, else the differing clauses it reads."""
        if rule in self.differs:
            return [rule]
        seen, todo, out = {rule}, [rule], []
        while todo:
            r = self.rules.get(todo.pop())
            if r is None:
                continue
            for name in r.names:
                for k in self.defines.get(name, ()):
                    if k not in seen:
                        seen.add(k)
                        todo.append(k)
                        if k in self.differs:
                            out.append(k)
        return sorted(out)

    def attribute(self, rule: str, how: str) -> tuple[str, str]:
        """The rule a difference is put down to, and what of it differs: *rule* (the step's, by its
        current number) itself, or, where it only reads clauses that differ, those clauses
        ('704.5c+704.6b'), *how* then naming the step's rule they are read through."""
        blamed = self.blame(rule) if rule else []
        if blamed and blamed != [rule]:
            return "+".join(blamed), f"{how} ({rule}, through {'/'.join(blamed)})"
        return rule, how

    def numbers(self, key: str) -> tuple[str | None, str | None]:
        """The numbers in A and in B of the rules *key* names by their current numbers
        ('704.5c+704.6b'); None for a side that has none of them."""
        out: list[str | None] = []
        for ids in self.ids:
            found = [ids[k] for k in key.split("+") if k in ids]
            out.append("+".join(found) if found else None)
        return out[0], out[1]
