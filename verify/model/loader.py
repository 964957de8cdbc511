"""Read a model directory: TOML files parsed as data, expressions by the lark grammar.

Every problem is collected as a :class:`Diagnostic` pointing into the user's
file; :func:`load_model` raises one :class:`ModelError` carrying them all.
Nothing in a model file is ever executed.
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Mapping

from verify.errors import BoundsError, Diagnostic, ModelError, SourceLoc, suggest
from verify.language.expr import Expr, Lit, Stmt, names
from verify.language.parser import ParseFailure, parse_expr, parse_stmts
from verify.language.typecheck import PRED_PARAM_TYPES, Scope, TypeChecker
from verify.model.editions import apply_edition
from verify.model.tomlfile import CR_NUMBER, RULE_ID
from verify.model.tomlfile import TomlFile as _File
from verify.model.tomlfile import rule_order as _rule_order
from verify.model.types import (
    CARD_GRAPH_NAMES,
    CLAUSE_KINDS,
    GRAPH_NAMES,
    LOOP_NAMES,
    PROPERTY_KINDS,
    TRANSITION_KINDS,
    CURRENT,
    Config,
    Edition,
    InitSpec,
    Model,
    ParamDecl,
    PredDecl,
    Property,
    Rule,
    VarDecl,
    Vocabulary,
    adjacent_teams,
    emperor_marks,
    emperor_seating,
    emperor_seats,
    team_seats,
)

__all__ = ["load_model", "bundled_model_dir", "display_path", "MAX_PLAYERS", "MAX_RANGE", "MAX_STATES"]

MAX_PLAYERS = 8          # Z3 instantiates player counts concretely up to here
MAX_EXPLICIT_PLAYERS = 6  # explicit exploration beyond this is hopeless in CI time
SCOPES = ("all", "bounds")  # a configuration's scope: every counter value, or its bounds only
MAX_RANGE = 64           # values one counter may take in explicit exploration
MAX_STATES = 5_000_000   # the largest state limit a configuration may ask for
MAX_CARDS = 6            # abstract cards in one configuration
DEFAULT_MAX_STATES = 1_000_000

PROP_ID = re.compile(r"^[a-z][a-z0-9-]*$")


def bundled_model_dir() -> Path:
    """The model shipped with Endgame (installed beside the package, or the checkout's)."""
    here = Path(__file__).resolve().parent.parent  # the verify package
    for candidate in (here / "bundled", here.parent / "model"):
        if (candidate / "state.toml").is_file():
            return candidate
    raise ModelError([Diagnostic(SourceLoc(str(here / "bundled")), "missing",
                                 "the bundled model is not installed")])



def display_path(path: Path) -> str:
    """How a model file is named in messages and reports: a file of the installed bundled model as
    'bundled:model/...' (no machine's paths in reports); else relative to the working directory,
    or as given."""
    here = Path(__file__).resolve().parent.parent / "bundled"  # (only an installed copy has it)
    try:
        rel = path.resolve().relative_to(here).as_posix()
        return "bundled:model" if rel == "." else "bundled:model/" + rel
    except ValueError:
        pass
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def domain_text(vocab: Vocabulary) -> str:
    """The domain property's 'then': every counter a rule may change stays at or above its minimum.

    >>> from verify.model.loader import load_model
    >>> domain_text(load_model().vocab).split(" and ")[0]
    "extra_turns' >= 0"
    """
    parts = []
    for v in vocab.vars.values():
        if v.type != "int" or v.min is None or v.fixed:
            continue
        if v.scope == "game":
            parts.append(f"{v.name}' >= {v.min}")
        elif v.scope == "player_card":
            parts.append(f"all(q in players: all(c in cards: {v.name}'[q, c] >= {v.min}))")
        else:
            q, dom = ("q", "players") if v.scope == "player" else ("c", "cards")
            parts.append(f"all({q} in {dom}: {v.name}'[{q}] >= {v.min})")
    return " and ".join(parts) or "true"

class _Loader:
    def __init__(self, root: Path):
        self.root = root
        self.diags: list[Diagnostic] = []
        self.warnings: list[Diagnostic] = []

    # -- small helpers ------------------------------------------------------------
    def err(self, loc: SourceLoc, code: str, message: str) -> None:
        self.diags.append(Diagnostic(loc, code, message))

    def warn(self, loc: SourceLoc, code: str, message: str) -> None:
        self.warnings.append(Diagnostic(loc, code, message, "warning"))

    def display(self, path: Path) -> str:
        return display_path(path)

    def keys(self, f: _File, table: dict[str, Any], allowed: Mapping[str, type | tuple[type, ...]],
             required: tuple[str, ...], path: tuple[object, ...], what: str) -> bool:
        ok = True
        for key, value in table.items():
            if key not in allowed:
                self.err(f.loc(*path, key), "key",
                         f"unknown key '{key}' in {what}{suggest(key, allowed)}")
                ok = False
            elif not isinstance(value, allowed[key]) or (isinstance(value, bool) and allowed[key] is int):
                want = allowed[key]
                names = " or ".join(t.__name__ for t in (want if isinstance(want, tuple) else (want,)))
                self.err(f.loc(*path, key), "type", f"'{key}' must be {names.replace('str', 'a string')}")
                ok = False
        for key in required:
            if key not in table:
                self.err(f.loc(*path), "missing", f"{what} has no '{key}'")
                ok = False
        return ok

    def parse(self, f: _File, path: tuple[object, ...], text: str,
              fn: Callable[[str, SourceLoc], Any]) -> Any:
        try:
            return fn(text, f.origin(*path))
        except ParseFailure as failure:
            self.diags.append(failure.diagnostic)
            return None
        except RecursionError:
            self.err(f.origin(*path), "syntax", "expression nested too deeply")
            return None

    # -- vocabulary ---------------------------------------------------------------
    def vocabulary(self) -> Vocabulary | None:
        path = self.root / "state.toml"
        if not path.is_file():
            self.err(SourceLoc(self.display(path)), "missing", "a model needs a state.toml declaring its variables")
            return None
        f = _File(path, self.display(path), self.diags)
        if not f.ok:
            return None
        self.keys(f, f.data, {"enums": dict, "game": dict, "player": dict, "card": dict, "player_card": dict,
                              "predicate": dict, "param": dict}, (), (), "state.toml")
        enums: dict[str, tuple[str, ...]] = {}
        seen_values: dict[str, str] = {}
        for name, values in _table(f.data, "enums").items():
            if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
                self.err(f.loc("enums", name), "type", f"enumeration '{name}' must be a list of names")
                continue
            for v in values:
                if v in seen_values:
                    self.err(f.loc("enums", name), "duplicate",
                             f"value '{v}' is already in enumeration '{seen_values[v]}'")
                seen_values[v] = name
            enums[name] = tuple(values)
        types = ("int", "bool", "player", "card") + tuple(enums)
        variables: dict[str, VarDecl] = {}
        for scope in ("game", "player", "card", "player_card"):
            for name, spec in _table(f.data, scope).items():
                at = (scope, name)
                if not isinstance(spec, dict):
                    self.err(f.loc(*at), "type", f"variable '{name}' must be a table")
                    continue
                if not self.keys(f, spec, {"type": str, "min": int, "fixed": bool, "strict_bound": bool,
                                           "text": str}, ("type",), at, f"variable '{name}'"):
                    continue
                if spec["type"] not in types:
                    self.err(f.loc(*at, "type"), "type",
                             f"unknown type '{spec['type']}'{suggest(spec['type'], types)}")
                    continue
                if name in variables:
                    self.err(f.loc(*at), "duplicate", f"variable '{name}' is declared twice")
                variables[name] = VarDecl(name, scope, spec["type"], spec.get("min"),
                                          spec.get("fixed", False), spec.get("text", ""), f.loc(*at),
                                          spec.get("strict_bound", False))
        preds: dict[str, PredDecl] = {}
        for name, spec in _table(f.data, "predicate").items():
            at = ("predicate", name)
            if not isinstance(spec, dict) or not self.keys(f, spec, {"params": list, "text": str}, (), at,
                                                           f"predicate '{name}'"):
                continue
            names_: list[str] = []
            kinds: list[str] = []
            for i, item in enumerate(spec.get("params", [])):
                pname, _, ptype = str(item).partition(":")
                pname, ptype = pname.strip(), ptype.strip() or "player"
                if not pname.isidentifier() or ptype not in PRED_PARAM_TYPES:
                    self.err(f.loc(*at, "params", i), "type",
                             f"a predicate parameter is a name, or a name and its type ('c: card'; the types are "
                             f"{', '.join(PRED_PARAM_TYPES)}), not {str(item)!r}")
                    continue
                names_.append(pname)
                kinds.append(ptype)
            preds[name] = PredDecl(name, tuple(names_), spec.get("text", ""), f.loc(*at),
                                   tuple(kinds) if any(t != "player" for t in kinds) else ())
        params_: dict[str, ParamDecl] = {}
        for name, spec in _table(f.data, "param").items():
            at = ("param", name)
            if not isinstance(spec, dict) or not self.keys(f, spec, {"min": int, "text": str}, (), at,
                                                           f"parameter '{name}'"):
                continue
            params_[name] = ParamDecl(name, spec.get("min"), spec.get("text", ""), f.loc(*at))
        clash = set(variables) & (set(preds) | set(params_) | set(seen_values))
        for name in sorted(clash):
            self.err(variables[name].loc, "duplicate", f"'{name}' names both a variable and something else")
        return Vocabulary(enums, variables, preds, params_)

    # -- rules --------------------------------------------------------------------
    def rules(self, vocab: Vocabulary) -> list[Rule]:
        out: list[Rule] = []
        files = sorted((self.root / "rules").glob("*.toml")) if (self.root / "rules").is_dir() else []
        if not files:
            self.err(SourceLoc(self.display(self.root / "rules")), "missing", "the model has no rules/*.toml files")
        checker = TypeChecker(vocab, self.diags)
        seen: dict[str, SourceLoc] = {}
        for path in files:
            f = _File(path, self.display(path), self.diags)
            if not f.ok:
                continue
            self.keys(f, f.data, {"rule": list}, (), (), path.name)
            for i, spec in enumerate(_array(f.data, "rule")):
                rule = self.rule(f, i, spec, vocab, checker)
                if rule is None:
                    continue
                if rule.id in seen:
                    self.err(f.loc("rule", i, "id"), "duplicate",
                             f"duplicate rule id '{rule.id}' (first defined at {seen[rule.id]})")
                    continue
                seen[rule.id] = rule.loc
                out.append(rule)
        return sorted(out, key=lambda r: _rule_order(r.id))

    def rule(self, f: _File, i: int, spec: Any, vocab: Vocabulary, checker: TypeChecker,
             table: str = "rule", extra: Mapping[str, type | tuple[type, ...]] | None = None) -> Rule | None:
        """The rule *spec*, the *i*-th of the file's ``[[table]]`` (an edition file's rules may
        have *extra* keys, which the caller reads)."""
        at: tuple[object, ...] = (table, i)
        if not isinstance(spec, dict):
            self.err(f.loc(*at), "type", f"each [[{table}]] must be a table")
            return None
        allowed = {"id": str, "cites": list, "text": str, "kind": str, "actor": str, "card": str,
                   "defines": str, "when": str, "then": str, **(extra or {})}
        if not self.keys(f, spec, allowed, ("id", "text", "kind", "when"), at, "rule"):
            return None
        rid, kind = spec["id"], spec["kind"]
        ok = True
        if not RULE_ID.match(rid):
            self.err(f.loc(*at, "id"), "rule-id",
                     f"rule id '{rid}' is not a CR number such as '104.3b' (optionally with a tag: '119.3/gain')")
            ok = False
        cites = tuple(str(c) for c in spec.get("cites", []))
        for c in cites:
            if not CR_NUMBER.match(c):
                self.err(f.loc(*at, "cites"), "rule-id", f"cited '{c}' is not a CR number")
                ok = False
        kinds = TRANSITION_KINDS + CLAUSE_KINDS
        if kind not in kinds:
            self.err(f.loc(*at, "kind"), "kind", f"unknown rule kind '{kind}'{suggest(kind, kinds)}; "
                     f"one of {', '.join(kinds)}")
            return None
        actor = spec.get("actor")
        card = spec.get("card")
        defines = spec.get("defines")
        bound: set[str] = set()
        cards: frozenset[str] = frozenset({card} if card else set())
        ints: frozenset[str] = frozenset()  # a clause's int parameters
        valued: frozenset[str] = frozenset()  # an expanded predicate's parameters
        if kind in CLAUSE_KINDS:
            if defines is None:
                self.err(f.loc(*at), "missing", f"a {kind} rule names the predicate it 'defines'")
                return None
            pred = vocab.preds.get(defines)
            if pred is None:
                self.err(f.loc(*at, "defines"), "name",
                         f"unknown predicate '{defines}'{suggest(defines, vocab.preds)}")
                return None
            if "then" in spec or actor is not None or card is not None:
                self.err(f.loc(*at), "key", f"a {kind} rule has no 'then', 'actor' or 'card': it only adds a condition")
                ok = False
            bound = set(pred.params)
            cards = frozenset(q for i, q in enumerate(pred.params) if pred.type_of(i) == "card")
            ints = frozenset(q for i, q in enumerate(pred.params) if pred.type_of(i) == "int")
            valued = frozenset(pred.params) if pred.expanded else frozenset()
        else:
            if "then" not in spec:
                self.err(f.loc(*at), "missing", "a transition rule needs 'then'")
                return None
            if defines is not None:
                self.err(f.loc(*at, "defines"), "key", "only clause and exception rules define predicates")
                ok = False
            if actor is not None:
                bound = {actor}
            if card is not None:
                if card == actor:
                    self.err(f.loc(*at, "card"), "key", f"'{card}' names both the actor and the card")
                    ok = False
                bound.add(card)
        when = self.parse(f, at + ("when",), spec["when"], parse_expr)
        then: tuple[Stmt, ...] = ()
        if "then" in spec and kind not in CLAUSE_KINDS:
            then = self.parse(f, at + ("then",), spec["then"], parse_stmts)
            if then is None:
                return None
        if when is None:
            return None
        guard_scope = Scope(frozenset(bound), cards=cards, ints=ints, valued=valued,
                            graph=LOOP_NAMES + CARD_GRAPH_NAMES if kind in TRANSITION_KINDS else ())
        checker.check_expr(when, guard_scope)
        # an update may read the graph names of the state it leaves (801.16: who controls an object
        # of the loop); such a rule asks about the play graph as a guard that reads them would
        checker.check_stmts(then, Scope(frozenset(bound), cards=cards,
                                        graph=LOOP_NAMES + CARD_GRAPH_NAMES if kind in TRANSITION_KINDS else ()))
        if not ok:
            return None
        graph = bool(set().union(names(when), *(names(a) for a in then)) & set(LOOP_NAMES + CARD_GRAPH_NAMES))
        return Rule(rid, cites, spec["text"], kind, actor, defines, when, then, spec["when"],
                    spec.get("then", ""), f.loc(*at, "id"), card, graph)

    # -- properties ---------------------------------------------------------------
    def properties(self, vocab: Vocabulary, known: set[str]) -> list[Property]:
        path = self.root / "properties.toml"
        if not path.is_file():
            self.err(SourceLoc(self.display(path)), "missing", "the model needs a properties.toml: a model with no "
                     "properties checks nothing")
            return []
        f = _File(path, self.display(path), self.diags)
        if not f.ok:
            return []
        self.keys(f, f.data, {"property": list}, (), (), path.name)
        if not _array(f.data, "property") and isinstance(f.data.get("property", []), list):
            self.err(f.loc(), "missing", "properties.toml defines no [[property]]: a model with no properties "
                     "checks nothing")
        checker = TypeChecker(vocab, self.diags)
        out: list[Property] = []
        seen: set[str] = set()
        for i, spec in enumerate(_array(f.data, "property")):
            at: tuple[object, ...] = ("property", i)
            allowed = {"id": str, "title": str, "protects": list, "kind": str, "for": str,
                       "when": str, "then": str, "concessions": bool, "optional": bool}
            if not isinstance(spec, dict) or not self.keys(f, spec, allowed, ("id", "title", "protects", "kind"),
                                                           at, "property"):
                continue
            is_domain = spec["kind"] == "domain"
            if is_domain:  # its 'then' is made from the declared minimums
                if "then" in spec or "when" in spec or "for" in spec:
                    self.err(f.loc(*at, "kind"), "key", "a domain property has no 'when', 'then' or 'for': it says "
                             "that every counter stays at or above the minimum state.toml declares for it")
                    continue
                spec = {**spec, "kind": "step", "then": domain_text(vocab)}
            elif "then" not in spec:
                self.err(f.loc(*at), "missing", "property has no 'then'")
                continue
            pid, kind = spec["id"], spec["kind"]
            if not PROP_ID.match(pid):
                self.err(f.loc(*at, "id"), "property-id", f"property id '{pid}' must be lower-case words joined by '-'")
                continue
            if pid in seen:
                self.err(f.loc(*at, "id"), "duplicate", f"duplicate property id '{pid}'")
                continue
            seen.add(pid)
            if kind not in PROPERTY_KINDS:
                self.err(f.loc(*at, "kind"), "kind",
                         f"unknown property kind '{kind}'{suggest(kind, PROPERTY_KINDS)}")
                continue
            protects = tuple(str(p) for p in spec["protects"])
            for cr in protects:
                if not RULE_ID.match(cr):
                    self.err(f.loc(*at, "protects"), "rule-id", f"'{cr}' is not a CR number such as '104.3b'")
                elif cr not in known:
                    self.warn(f.loc(*at, "protects"), "unknown-rule",
                              f"property '{pid}' protects rule '{cr}'{suggest(cr, known)}, "
                              "but no rule of this model has that number or cites it")
            when_src = spec.get("when", "true")
            when = self.parse(f, at + ("when",), when_src, parse_expr) if "when" in spec else Lit(True)
            if is_domain and spec["then"] == "true":  # no variable declares a minimum
                self.warn(f.loc(*at, "kind"), "vacuous", "no variable in state.toml declares a 'min'")
            then = self.parse(f, at + ("then",), spec["then"], parse_expr)
            if when is None or then is None:
                continue
            var = spec.get("for")
            scope = Scope(frozenset({var} if var else set()), primed=(kind == "step"), terminal=True,
                          graph=GRAPH_NAMES + CARD_GRAPH_NAMES + ("next",))
            checker.check_expr(when, scope)
            checker.check_expr(then, scope)
            misplaced = [k for k in ("concessions", "optional") if k in spec and kind == "state"]
            if misplaced:
                self.err(f.loc(*at, misplaced[0]), "key", f"'{misplaced[0]}' applies to step and terminal properties")
                continue
            out.append(Property(pid, spec["title"], protects, kind, var, when, then, when_src,
                                spec["then"], f.loc(*at, "id"), spec.get("concessions", True), spec.get("optional", True),
                                domain=is_domain))
        return out

    # -- configurations -----------------------------------------------------------
    def configs(self, vocab: Vocabulary, rules: list[Rule], edition: Edition = CURRENT) -> list[Config]:
        path = self.root / "configs.toml"
        if not path.is_file():
            self.err(SourceLoc(self.display(path)), "missing", "the model needs a configs.toml")
            return []
        f = _File(path, self.display(path), self.diags)
        if not f.ok:
            return []
        self.keys(f, f.data, {"config": list}, (), (), path.name)
        out: list[Config] = []
        optional = [r.id for r in rules if r.kind == "optional"]
        for i, spec in enumerate(_array(f.data, "config")):
            at: tuple[object, ...] = ("config", i)
            allowed: dict[str, type | tuple[type, ...]] = {
                "name": str, "players": list, "explore_players": list, "params": dict, "bounds": dict, "init": dict,
                "seats": dict, "actions": list, "max_states": int, "card": list, "ranking": (list, str),
                "escape": (list, str), "lemmas": list, "loops": str, "quiet": str,
                "symmetry": bool, "scope": str, "teams": list, "team_size": int}
            if not isinstance(spec, dict) or not self.keys(f, spec, allowed, ("name", "players"), at,
                                                           "configuration"):
                continue
            before = len(self.diags)
            players = spec["players"]
            if not players or not all(isinstance(n, int) and not isinstance(n, bool) for n in players):
                self.err(f.loc(*at, "players"), "type", "'players' must be a list of player counts")
                continue
            for n in players:
                if not 2 <= n <= MAX_PLAYERS:
                    self.err(f.loc(*at, "players"), "bounds",
                             f"{n} players is outside 2..{MAX_PLAYERS}")
            params = dict(spec.get("params", {}))
            for name, value in params.items():  # 'params' is a table: checked by keys()
                pdecl = vocab.params.get(name)
                if pdecl is None:
                    self.err(f.loc(*at, "params", name), "name", f"unknown parameter '{name}'{suggest(name, vocab.params)}")
                elif not isinstance(value, int) or isinstance(value, bool):
                    self.err(f.loc(*at, "params", name), "type", f"parameter '{name}' must be an integer")
                elif pdecl.min is not None and value < pdecl.min:
                    self.err(f.loc(*at, "params", name), "bounds", f"parameter '{name}' must be at least {pdecl.min}")
            for name in vocab.params:
                if name not in params:
                    self.err(f.loc(*at), "missing", f"configuration '{spec['name']}' sets no value for parameter '{name}'")
            bounds: dict[str, tuple[int, int]] = {}
            for name, rng in spec.get("bounds", {}).items():
                bounds_at = at + ("bounds", name)
                decl = vocab.vars.get(name)
                if decl is None or decl.type != "int":
                    ints = [v for v, d in vocab.vars.items() if d.type == "int"]
                    self.err(f.loc(*bounds_at), "name", f"'{name}' is not an integer variable{suggest(name, ints)}")
                    continue
                if (not isinstance(rng, list) or len(rng) != 2
                        or not all(isinstance(x, int) and not isinstance(x, bool) for x in rng)):
                    self.err(f.loc(*bounds_at), "type", f"the bound of '{name}' must be [low, high]")
                    continue
                lo, hi = rng
                if lo > hi:
                    self.err(f.loc(*bounds_at), "bounds", f"the bound of '{name}' is empty: {lo} > {hi}")
                elif decl.min is not None and lo < decl.min:
                    self.err(f.loc(*bounds_at), "bounds",
                             f"'{name}' cannot be negative here: its bound starts at {lo}, below its minimum {decl.min}")
                elif hi - lo + 1 > MAX_RANGE:
                    self.err(f.loc(*bounds_at), "bounds",
                             f"the bound of '{name}' has {hi - lo + 1} values; explicit exploration allows at most "
                             f"{MAX_RANGE} per counter (prove larger ranges with the z3 engine)")
                bounds[name] = (lo, hi)
            for name, vdecl in vocab.vars.items():
                if vdecl.fixed or (vdecl.scope in ("card", "player_card") and not spec.get("card")):
                    continue  # never written, or no card to write it
                if vdecl.type == "int" and name not in bounds:
                    self.err(f.loc(*at), "missing", f"configuration '{spec['name']}' has no bound for '{name}'")
            card_names = self.card_names(f, at, spec.get("card", []))
            init = {name: s for name, s in ((n, self.init_spec(f, at + ("init", n), n, v, vocab, bounds, card_names))
                                            for n, v in spec.get("init", {}).items()) if s is not None}
            cards: list[dict[str, InitSpec]] = []
            for ci, table in enumerate(spec.get("card", [])):
                card_at = at + ("card", ci)
                values: dict[str, InitSpec] = {}
                for n, v in (table.items() if isinstance(table, dict) else ()):
                    if n == "name":
                        continue
                    decl = vocab.vars.get(n)
                    if decl is None or decl.scope != "card":
                        known = [d.name for d in vocab.card_vars()]
                        self.err(f.loc(*card_at, n), "name", f"'{n}' is not a card variable{suggest(n, known)}")
                        continue
                    got = self.init_spec(f, card_at + (n,), n, v, vocab, bounds, card_names)
                    if got is not None:
                        values[n] = got
                cards.append(values)
            seats: dict[int, dict[str, InitSpec]] = {}
            for seat, table in spec.get("seats", {}).items():
                seat_at = at + ("seats", seat)
                m = re.fullmatch(r"P(\d+)", seat)
                if not m or not isinstance(table, dict):
                    self.err(f.loc(*seat_at), "key", f"a seat is written P0, P1, ... and holds a table, not '{seat}'")
                    continue
                idx = int(m.group(1))
                if idx >= min(players):
                    self.err(f.loc(*seat_at), "bounds", f"seat {seat} does not exist in a {min(players)}-player game")
                seats[idx] = {n: s for n, s in ((n, self.init_spec(f, seat_at + (n,), n, v, vocab, bounds, card_names))
                                                for n, v in table.items()) if s is not None}
            actions = spec.get("actions")
            if actions is not None and edition is not CURRENT:  # named by their current numbers
                actions = [edition.number(a) if isinstance(a, str) else a for a in actions
                           if not (isinstance(a, str) and a in edition.removed)]
            if actions is not None:
                for a in actions:
                    if not isinstance(a, str) or not RULE_ID.match(a):
                        self.err(f.loc(*at, "actions"), "rule-id", f"'{a}' is not a rule id such as '121.3'")
                    elif a not in optional:
                        self.warn(f.loc(*at, "actions"), "unknown-rule",
                                  f"'{a}' is not an optional rule of this model{suggest(str(a), optional)}; "
                                  "configuration '" + spec["name"] + "' leaves it out")
            checker = TypeChecker(vocab, self.diags)
            # (a configuration above that is in error has been reported: borrowing from it is not)
            earlier = {str(c.get("name")) for c in _array(f.data, "config")[:i] if isinstance(c, dict)}
            ranking = self.measure(f, at, spec, "ranking", out, checker, earlier)
            escape = self.measure(f, at, spec, "escape", out, checker, earlier)
            lemmas = [e for r, text in enumerate(spec.get("lemmas", []))
                      if (e := self.condition(f, at + ("lemmas", r), text, checker, "'lemmas' lists")) is not None]
            loops = self.condition(f, at + ("loops",), spec["loops"], checker, "'loops' is") if "loops" in spec else None
            if loops is not None and not spec.get("escape"):  # (a borrowed measure in error is reported there)
                self.err(f.loc(*at, "loops"), "loops",
                         "'loops' says where an escape measure's mandatory loops run: give the configuration an "
                         "'escape' measure too")
            quiet = self.condition(f, at + ("quiet",), spec["quiet"], checker, "'quiet' is") if "quiet" in spec else None
            if quiet is not None and not spec.get("escape"):
                self.err(f.loc(*at, "quiet"), "quiet",
                         "'quiet' says where no card's ability can come again, for an escape measure that "
                         "shows the cards a mandatory loop involves: give the configuration an 'escape' measure too")
            max_states = spec.get("max_states", DEFAULT_MAX_STATES)
            if not 1 <= max_states <= MAX_STATES:
                self.err(f.loc(*at, "max_states"), "bounds",
                         f"max_states must be between 1 and {MAX_STATES:,}")
            explore_players = spec.get("explore_players")
            if explore_players is not None:
                for n in explore_players:
                    if n not in players:
                        self.err(f.loc(*at, "explore_players"), "bounds",
                                 f"explore_players lists {n}, which is not one of the configuration's players")
                    elif n > MAX_EXPLICIT_PLAYERS:
                        self.err(f.loc(*at, "explore_players"), "bounds",
                                 f"explicit exploration allows at most {MAX_EXPLICIT_PLAYERS} players")
            elif max(players) > MAX_EXPLICIT_PLAYERS:
                self.err(f.loc(*at, "players"), "bounds",
                         f"explicit exploration allows at most {MAX_EXPLICIT_PLAYERS} players; list the player "
                         "counts to explore in 'explore_players' (Z3 checks them all)")
            scope = spec.get("scope", "all")
            if scope not in SCOPES:
                self.err(f.loc(*at, "scope"), "scope", f"unknown scope '{scope}'{suggest(scope, SCOPES)}; "
                         "\"bounds\" (the bounds are the whole game) or \"all\" (they only stop exploration)")
            teams, team_size = self.config_teams(f, at, spec, players)
            if len(self.diags) > before:
                continue
            variant = init.get("variant")
            if variant is not None and "two_headed_giant" in (str(v) for v in variant.explicit()):
                self.two_headed_teams(f, at, players, teams, team_size, init)
                if len(self.diags) > before:
                    continue
            marks = emperor_marks(variant, init, seats)
            if marks:
                where = ("init",) if marks[0] is None else ("seats", f"P{marks[0]}")
                self.err(f.loc(*at, *where, "is_emperor"),
                         "teams", "is_emperor = true belongs to Emperor games (809.2): give the configuration "
                         "variant = \"emperor\", or leave is_emperor out")
                continue
            if variant is not None and "emperor" in (str(v) for v in variant.explicit()):
                emperors = emperor_seats(seats)
                for n in players:
                    why = emperor_seating(team_seats(teams, team_size, n), emperors, n)
                    if why:
                        self.err(f.loc(*at, "teams" if teams else "name"), "teams", f"{n} players: {why}")
                        break
                if len(self.diags) > before:
                    continue
            # each seat-valued initial value needs a seat to name: its smallest choice must exist
            firsts = [min(int(v) for v in s.explicit())  # type: ignore[call-overload]
                      for name, s in [*init.items(), *((n, s) for c in cards for n, s in c.items())]
                      if vocab.vars[name].type == "player" and s.explicit()]
            min_players = max([2, *(p + 1 for p in seats), *(v + 1 for v in firsts)])
            out.append(Config(spec["name"], tuple(sorted(set(players))), params, bounds, init, seats,
                              tuple(actions) if actions is not None else None, max_states, f.loc(*at, "name"),
                              tuple(sorted(set(explore_players))) if explore_players is not None else None,
                              tuple(cards), card_names, tuple(ranking), spec.get("symmetry", False), min_players,
                              scope == "bounds", teams, team_size, tuple(escape), tuple(lemmas), loops, quiet))
        names = [c.name for c in out]
        for c in out:
            if names.count(c.name) > 1:
                self.err(c.loc, "duplicate", f"duplicate configuration name '{c.name}'")
                break
        if not out and not self.diags:
            self.err(f.loc(), "missing", "configs.toml defines no [[config]]: a model with no configuration explores "
                     "no game")
        return out

    def two_headed_teams(self, f: _File, at: tuple[object, ...], players: list[int],
                         teams: tuple[tuple[int, ...], ...], team_size: int, init: dict[str, InitSpec]) -> None:
        """A Two-Headed Giant configuration seats each team together, all teams of one size, and
        starts on a team's turn: the active player is its team's first seat (805, 810.3)."""
        for n in players:
            game = team_seats(teams, team_size, n)
            if not adjacent_teams(game, n):
                self.err(f.loc(*at, "teams" if teams else "name"), "teams",
                         f"a Two-Headed Giant game of {n} players needs teams of two or more players sitting "
                         "together, all the same size (810.1, 810.3, 810.11), e.g. teams = [[0, 1], [2, 3]]")
                return
            size = len(game[0])
            active = init.get("active")
            starts = [int(v) for v in active.explicit()] if active is not None else [0]  # type: ignore[call-overload]
            if any(v % size for v in starts):
                self.err(f.loc(*at, "init", "active") if active is not None else f.loc(*at), "teams",
                         f"in Two-Headed Giant the team takes the turn: the active player starts as a team's first "
                         f"seat (a multiple of {size}), not {next(v for v in starts if v % size)}")
                return

    def config_teams(self, f: _File, at: tuple[object, ...], spec: dict[str, Any], players: list[int]
              ) -> tuple[tuple[tuple[int, ...], ...], int]:
        """A configuration's teams: explicit seat lists (one player count only) or a team size."""
        if "teams" in spec and "team_size" in spec:
            self.err(f.loc(*at, "teams"), "teams", "give either 'teams' (seat lists) or 'team_size', not both")
            return (), 0
        size = spec.get("team_size", 0)
        if "team_size" in spec:
            bad = [n for n in players if size < 1 or n % size or n // size < 2]
            if bad:
                self.err(f.loc(*at, "team_size"), "teams",
                         f"{bad[0]} players do not make two or more teams of {size}")
            return (), size
        if "teams" not in spec:
            return (), 0
        raw = spec["teams"]
        if len(set(players)) != 1:
            self.err(f.loc(*at, "teams"), "teams",
                     "'teams' lists seats for one player count; with several counts give 'team_size'")
            return (), 0
        n = players[0]
        if not all(isinstance(t, list) and t and all(isinstance(x, int) and not isinstance(x, bool) for x in t)
                   for t in raw):
            self.err(f.loc(*at, "teams"), "type", "'teams' is a list of teams, each a list of seats such as [0, 2]")
            return (), 0
        seats = [x for t in raw for x in t]
        if sorted(seats) != list(range(n)) or len(raw) < 2:
            self.err(f.loc(*at, "teams"), "teams",
                     f"'teams' must share the seats 0..{n - 1} among two or more teams, each seat once")
            return (), 0
        return tuple(tuple(sorted(t)) for t in raw), 0

    def measure(self, f: _File, at: tuple[object, ...], spec: dict[str, Any], key: str, above: list[Config],
                checker: TypeChecker, earlier: set[str]) -> list[Expr]:
        """A configuration's ranking or escape measure: its integer expressions, or (a string) the
        measure of a configuration above, borrowed: its ranking, or for an escape measure its
        escape measure where it has one (a ranking is an escape measure too)."""
        shared = spec.get(key)
        if isinstance(shared, str):  # ranking = "multiplayer": the measure of a configuration above

            def measure_of(c: Config) -> tuple[Expr, ...]:
                return (c.escape or c.ranking) if key == "escape" else c.ranking
            have = {c.name: c for c in above}
            if shared in earlier and shared not in have:
                return []  # that configuration's own error is reported; borrowing adds nothing
            if shared not in have or not measure_of(have[shared]):
                ranked = [c.name for c in above if measure_of(c)]
                what = "a ranking or an escape measure" if key == "escape" else "a ranking"
                self.err(f.loc(*at, key), "name",
                         f"'{key}' names '{shared}', which is not a configuration above with {what}"
                         f"{suggest(shared, ranked)}")
                return []
            return list(measure_of(have[shared]))
        out: list[Expr] = []
        for r, text in enumerate(spec.get(key, [])):
            if not isinstance(text, str):
                self.err(f.loc(*at, key), "type", f"'{key}' lists integer expressions, as strings")
                continue
            expr = self.parse(f, at + (key, r), text, parse_expr)
            if expr is not None and checker.check_expr(expr, Scope(), want="int") is not None:
                out.append(expr)
        return out

    def condition(self, f: _File, at: tuple[object, ...], text: object, checker: TypeChecker,
                  what: str) -> Expr | None:
        """A boolean expression over a state, from a configuration (a lemma, its loops); the type
        checker keeps the play graph's names out of it, as out of every expression but the
        properties and the loop rules' guards."""
        if not isinstance(text, str):
            self.err(f.loc(*at), "type", f"{what} boolean expressions over a state, as strings")
            return None
        expr = self.parse(f, at, text, parse_expr)
        if expr is None or checker.check_expr(expr, Scope(), want="bool") is None:
            return None
        return expr  # type: ignore[no-any-return]

    def card_names(self, f: _File, at: tuple[object, ...], tables: Any) -> tuple[str, ...]:
        """The names of a configuration's [[config.card]] tables, checked."""
        names: list[str] = []
        if not isinstance(tables, list):
            return ()
        if at and len(tables) > MAX_CARDS:  # a scenario's cards are counted as they are expanded
            self.err(f.loc(*at, "card"), "bounds", f"{len(tables)} cards; a configuration may have at most {MAX_CARDS}")
        for c, table in enumerate(tables):
            name = table.get("name") if isinstance(table, dict) else None
            section = "[[config.card]]" if at else "[[card]]"
            if not isinstance(name, str):
                self.err(f.loc(*at, "card", c), "key", f"each {section} needs a 'name' such as \"Sanctum\"")
                name = f"card{c}"
            elif not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", name):
                fixed = re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_") or "Sanctum"
                self.err(f.loc(*at, "card", c, "name"), "name",
                         f"'{name}' cannot name a card: a name is a letter, then letters, digits, '_' or '-'"
                         f" (e.g. \"{fixed if fixed[0].isalpha() else 'Card_' + fixed}\")")
                name = f"card{c}"
            elif name in names:
                self.err(f.loc(*at, "card", c, "name"), "duplicate", f"two cards are named '{name}'")
            names.append(name)
        return tuple(names)

    def init_spec(self, f: _File, at: tuple[object, ...], name: str, value: Any, vocab: Vocabulary,
                  bounds: dict[str, tuple[int, int]], card_names: tuple[str, ...] = ()) -> InitSpec | None:
        decl = vocab.vars.get(name)
        if decl is None:
            self.err(f.loc(*at), "name", f"unknown variable '{name}'{suggest(name, vocab.vars)}")
            return None
        values = value if isinstance(value, list) else [value]
        if decl.type == "card":
            if not all(isinstance(v, str) and v in card_names for v in values):
                bad = next((v for v in values if not (isinstance(v, str) and v in card_names)), value)
                self.err(f.loc(*at), "name", f"'{name}' names a card of this configuration, not {bad!r}"
                         f"{suggest(str(bad), card_names)}")
                return None
            return InitSpec(values=tuple(dict.fromkeys(card_names.index(v) for v in values)))
        if decl.type == "int" or decl.type == "player":
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in values) or not 1 <= len(values) <= 2:
                self.err(f.loc(*at), "type", f"'{name}' starts at an integer or a range [low, high]")
                return None
            lo, hi = values[0], values[-1]
            if not isinstance(value, list):  # a single value is exact, also in proofs for all values
                if decl.min is not None and lo < decl.min:
                    self.err(f.loc(*at), "bounds", f"'{name}' cannot start below {decl.min}")
                    return None
                return InitSpec(values=(lo,))
            if lo > hi:
                self.err(f.loc(*at), "bounds", f"the initial range of '{name}' is empty")
                return None
            if decl.min is not None and lo < decl.min:
                self.err(f.loc(*at), "bounds", f"'{name}' cannot start below {decl.min}")
                return None
            if name in bounds and not (bounds[name][0] <= lo and hi <= bounds[name][1]):
                self.err(f.loc(*at), "bounds", f"the initial range of '{name}' lies outside its bound {list(bounds[name])}")
                return None
            return InitSpec(lo=lo, hi=hi)
        if decl.type == "bool":
            if not all(isinstance(v, bool) for v in values):
                self.err(f.loc(*at), "type", f"'{name}' starts at true, false or [false, true]")
                return None
            return InitSpec(values=tuple(dict.fromkeys(values)))
        allowed = vocab.enums[decl.type]
        for v in values:
            if v not in allowed:
                self.err(f.loc(*at), "name", f"'{v}' is not {'an' if decl.type[0] in 'aeiou' else 'a'} {decl.type}{suggest(str(v), allowed)}")
                return None
        return InitSpec(values=tuple(dict.fromkeys(values)))

    # -- whole-model checks -------------------------------------------------------
    def predicate_cycles(self, vocab: Vocabulary, rules: list[Rule]) -> None:
        deps: dict[str, set[str]] = {p: set() for p in vocab.preds}
        where: dict[str, SourceLoc] = {}
        for r in rules:
            if r.defines:
                deps[r.defines] |= names(r.when) & set(vocab.preds)
                where.setdefault(r.defines, r.loc)
        state: dict[str, int] = {}

        def visit(p: str, stack: list[str]) -> None:
            state[p] = 1
            for q in sorted(deps.get(p, ())):
                if state.get(q) == 1:
                    cycle = " -> ".join(stack[stack.index(q):] + [q]) if q in stack else q
                    self.err(where.get(p, vocab.preds[p].loc), "cycle", f"predicates depend on themselves: {cycle}")
                elif q not in state:
                    visit(q, stack + [q])
            state[p] = 2

        for p in sorted(deps):
            if p not in state:
                visit(p, [p])


def _table(data: dict[str, Any], key: str) -> dict[str, Any]:
    """``data[key]`` when it is a table (a wrong shape has been reported already)."""
    value = data.get(key, {})
    return value if isinstance(value, dict) else {}


def _array(data: dict[str, Any], key: str) -> list[Any]:
    value = data.get(key, [])
    return value if isinstance(value, list) else []


def load_model(root: Path | str | None = None, edition: str | None = None) -> Model:
    """Load and check a model directory; raise :class:`ModelError` listing every problem.
    *edition* names an edition of ``editions/`` (None or "current": the rules of ``rules/``).

    >>> model = load_model()
    >>> model.rule("104.4a").kind
    'clause'
    >>> load_model(edition="2009").rule("119.2a").text.startswith("If an effect instructs")
    True
    """
    path = Path(root) if root is not None else bundled_model_dir()
    if not path.is_dir():
        raise ModelError([Diagnostic(SourceLoc(str(path)), "missing", "no such model directory")])
    key = (*_content_key(path), edition or CURRENT.name)
    model = _LOADED.get(key)
    if model is None:
        model = _load(path, edition or CURRENT.name)
        _LOADED[key] = model
        while len(_LOADED) > 8:
            del _LOADED[next(iter(_LOADED))]
    return model


# Models already loaded in this process, by what their files hold: a model is a frozen value,
# so loading the same files again (a test suite, `verify` commands run in one process) gives
# the same one. Any change to a rules file's bytes is a new key.
# (The path as given and the working directory are part of the key: a model keeps its root, and
# its warnings name files as seen from where it was loaded.)
_LOADED: dict[tuple[str, str, str, str], Model] = {}


def _content_key(path: Path) -> tuple[str, str, str]:
    digest = hashlib.sha256()
    rules = sorted((path / "rules").glob("*.toml")) if (path / "rules").is_dir() else []
    editions = sorted((path / "editions").glob("*.toml")) if (path / "editions").is_dir() else []
    for f in [path / "state.toml", path / "properties.toml", path / "configs.toml", *rules, *editions]:
        data = f.read_bytes() if f.is_file() else b"\1missing"
        digest.update(f.name.encode() + b"\0" + data + b"\0")
    return str(path), os.getcwd(), digest.hexdigest()


def _load(path: Path, edition_name: str) -> Model:
    loader = _Loader(path)
    vocab = loader.vocabulary()
    if vocab is None:
        raise ModelError(loader.diags)
    rules = loader.rules(vocab)
    known = {x for r in rules for x in (r.id, r.cr, *r.cites)}  # properties name the current numbers
    edition = CURRENT
    if edition_name != CURRENT.name and not loader.diags:
        rules, edition = apply_edition(loader, vocab, rules, edition_name)
        known |= {x for r in rules for x in (r.id, r.cr, *r.cites)}
    loader.predicate_cycles(vocab, rules)
    properties = [replace(p, protects=tuple(dict.fromkeys(edition.number(x) for x in p.protects)))
                  for p in loader.properties(vocab, known)]
    configs = loader.configs(vocab, rules, edition)
    for said, kind, known_names in ((edition.not_applicable, "property", [p.id for p in properties]),
                                     (edition.configs_not_applicable, "configuration", [c.name for c in configs])):
        for name in said:
            if name not in known_names:
                loader.err(edition.where.get(name, edition.loc or SourceLoc(str(path))), "name",
                           f"the edition says {kind} '{name}' does not apply, but the model has no such "
                           f"{kind}{suggest(name, known_names)}")
    if loader.diags:
        bounds_only = all(d.code == "bounds" for d in loader.diags)
        raise (BoundsError if bounds_only else ModelError)(loader.diags)
    return Model(path, vocab, tuple(rules), tuple(properties), tuple(configs), tuple(loader.warnings), edition)
