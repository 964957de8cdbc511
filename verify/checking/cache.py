"""Results kept between runs, by what they mean.

A game's results (a configuration and a player count, every property checked on it) are kept in a
cache folder under a key made from the parsed meaning of everything they depend on: the
vocabulary, the rules that are live in the game (a rule dead there changes nothing in it:
:mod:`verify.explicit.relevance`), every property (the state properties are the invariants every
Z3 proof of the game assumes), the configuration, the player count, the engines and budgets, and
the versions of Endgame (:func:`~verify.version.build`: with a digest of its source) and Z3. Rule
texts, citations and source lines are no part of a meaning: rewording a rule finds every result
again; changing what a rule does checks again only the games where it is live. Which rules are
live in a game is kept too (:class:`LiveRules`), under the meaning of the vocabulary and every
rule's guard or condition, and what it reads of the game
(:func:`~verify.explicit.relevance.liveness`: seats, cards, teams, parameters, fixed values,
actions; working it out compiles every guard for the game): a run where nothing of that changed
reads it back.

An entry is data (JSON), never code. It is trusted only after every trace in it has been replayed
through the rules as they are now (from an initial state for a counterexample or a witness); an
entry that fails to load or to replay is ignored and the game checked again. Results that depend
on the machine (a wall-clock safety net or a memory limit reached) are not kept. A step of a loop
rule is replayed on the play that follows its state by mandatory steps alone
(:class:`verify.explicit.loops.LocalLoops`): the explored graph it was found on is not at hand.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import fields, is_dataclass, replace
from enum import Enum
from functools import partial
from pathlib import Path
from typing import Any, Mapping, Sequence

from verify.checking.trace import ReplayMismatch, Step, Trace, replay
from verify.checking.verdict import EngineResult, Verdict
from verify.explicit.budget import MACHINE_DEPENDENT
from verify.explicit.drift import Drift, game_drift
from verify.explicit.evaluate import Compiler, instances
from verify.explicit.folding import Folding
from verify.explicit.localloops import LocalLoops
from verify.explicit.relevance import live_rules, liveness
from verify.model.state import Layout, State, is_initial
from verify.model.types import Config, Model, Property
from verify.version import build

__all__ = ["ResultCache", "LiveRules", "DEFAULT_CACHE_DIR", "meaning", "digest", "read", "keep", "trace_data", "trace_of",
           "steps_data", "steps_of"]

DEFAULT_CACHE_DIR = ".endgame-cache"
FORMAT = 1  # the layout of an entry: raise it when that changes
LIVE = "live"  # the subfolder where the rules live in each game are kept, apart from the results
# What makes no part of a meaning: texts, citations, where a definition is written.
_TEXT = frozenset({"text", "when_src", "then_src", "cites", "protects", "loc"})

_Results = dict[str, list[EngineResult]]


def meaning(value: Any) -> Any:
    """*value* as plain JSON data: frozen value types field by field (leaving out texts,
    citations and source locations), mappings in their order, enumerations by value."""
    if is_dataclass(value) and not isinstance(value, type):
        return [type(value).__name__] + [[f.name, meaning(getattr(value, f.name))] for f in fields(value)
                                         if f.compare and f.name not in _TEXT]
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):
        return [[meaning(k), meaning(v)] for k, v in value.items()]
    if isinstance(value, (frozenset, set)):
        return sorted((meaning(v) for v in value), key=repr)
    if isinstance(value, (list, tuple)):
        return [meaning(v) for v in value]
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, Path):
        return None  # where the model lies is no part of what it means
    raise TypeError(f"no meaning for {type(value).__name__}")


def digest(data: Any) -> str:
    """A key for plain JSON *data*."""
    return hashlib.sha256(json.dumps(data, separators=(",", ":")).encode()).hexdigest()


class LiveRules:
    """Which rules are live in each game (:func:`~verify.explicit.relevance.live_rules`, which
    compiles every rule's guard or condition for it), kept in a cache folder's ``live/`` under the
    meaning of the vocabulary, of every rule's guard or condition (with its kind and what it is
    instantiated for), and of what they read of the game (:func:`liveness`): a run where none of
    them changed reads them back, a change to what a rule does included. The games' results and the
    case library's scenarios are both kept under the meaning of the rules live where they are
    played."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder) / LIVE
        # the digests of one model's parts, worked out once for all its games
        self._parts: tuple[Model, str, dict[str, str], str, str] | None = None
        self._meanings: dict[int, tuple[Any, Any]] = {}  # id -> (the value, kept alive; its meaning)
        self._found: dict[tuple[str, tuple[object, ...]], frozenset[str]] = {}  # this run's, by what they read

    def meaning(self, value: Any) -> Any:
        """:func:`meaning` of a frozen value (a configuration, the options), worked out once for
        all the games that share it."""
        hit = self._meanings.get(id(value))
        if hit is None or hit[0] is not value:
            hit = self._meanings[id(value)] = (value, meaning(value))
        return hit[1]

    def digests(self, model: Model) -> tuple[str, dict[str, str]]:
        """The digest of the vocabulary and every property, and each rule's."""
        return self._digests(model)[:2]

    def vocabulary(self, model: Model) -> str:
        """The digest of the vocabulary alone."""
        return self._digests(model)[3]

    def _digests(self, model: Model) -> tuple[str, dict[str, str], str, str]:
        if self._parts is None or self._parts[0] is not model:
            vocab = meaning(model.vocab)
            whole = digest([vocab, [meaning(p) for p in model.properties]])
            rules = {r.id: digest(meaning(r)) for r in model.rules}
            # what live_rules reads of the model: each rule's guard or condition and what it is
            # instantiated for, never what it does (a rule whose update changed is as live as before)
            guards = digest({"live rules of": vocab, "rules": [meaning([r.id, r.kind, r.actor, r.card, r.defines, r.when])
                                                                for r in model.rules]})
            self._parts = (model, whole, rules, guards, digest(vocab))
        return self._parts[1], self._parts[2], self._parts[3], self._parts[4]

    def of(self, model: Model, config: Config, n: int) -> frozenset[str]:
        """The ids of the rules live in the game of *config* with *n* players, kept under the
        meaning of the model and what they read of the game (:func:`liveness`)."""
        _, rules, every, _ = self._digests(model)
        reads = liveness(model, config, n)
        hit = self._found.get((every, reads))
        if hit is not None:
            return hit
        key = digest({"format": FORMAT, "endgame": build(), "model": every, "game": meaning(reads)})
        live: frozenset[str] | None = None
        try:
            data = read(self.folder, key, FORMAT)
            if data is not None and isinstance(data.get("live"), list):
                known = set(rules)
                if all(isinstance(r, str) and r in known for r in data["live"]):
                    live = frozenset(data["live"])
        except (OSError, ValueError):
            pass
        if live is None:
            live = live_rules(model, config, n)
            keep(self.folder, key, {"format": FORMAT, "key": key, "live": sorted(live)})
        self._found[(every, reads)] = live
        return live


class ResultCache:
    """A cache folder of games' results."""

    def __init__(self, folder: str | Path, z3_version: str):
        self.folder = Path(folder)
        self.z3_version = z3_version
        self.live = LiveRules(folder)
        build()  # (worked out once, before the games' processes are forked)

    def key(self, model: Model, config: Config, n: int, props: Sequence[Property], options: Any) -> str:
        """The key of a game's results: see the module's documentation."""
        live = self.live.of(model, config, n)
        whole, rules = self.live.digests(model)
        return digest({
            "format": FORMAT, "endgame": build(), "z3": self.z3_version,
            "vocabulary and properties": whole,
            "rules": [rules[r.id] for r in model.rules if r.id in live],
            "checked": [p.id for p in props],
            "config": self.live.meaning(config), "players": n, "options": self.live.meaning(options),
        })

    def load(self, key: str, model: Model, config: Config, n: int) -> _Results | None:
        """The results kept under *key*, every trace replayed on *model*; None if there are none,
        or if the entry does not load or a trace does not replay."""
        try:
            data = read(self.folder, key, FORMAT)
            if data is None:
                return None
            taken = {step[0] for rs in data["results"].values() for r in rs
                     for t in (r["trace"], r["witness"], r["cti"]) if t is not None for step in t["steps"]}
            game = _Game(model, config, n, taken)
            out = {pid: [game.result(r) for r in rs] for pid, rs in data["results"].items()}
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError, ArithmeticError,
                ReplayMismatch):
            return None
        return out

    def store(self, key: str, results: _Results) -> None:
        """Keep *results* under *key* (not those that depend on the machine). A folder that cannot
        be written to keeps nothing: the cache is an aid, never a reason to fail."""
        every = [r for rs in results.values() for r in rs]
        if any(r.verdict is Verdict.UNKNOWN and MACHINE_DEPENDENT in r.method for r in every):
            return
        try:
            data = {"format": FORMAT, "key": key,
                    "results": {pid: [_result_data(r) for r in rs] for pid, rs in results.items()}}
        except ValueError:  # a trace it cannot keep
            return
        keep(self.folder, key, data)


def _path(folder: Path, key: str) -> Path:
    return folder / key[:2] / f"{key}.json"


def read(folder: Path, key: str, fmt: int) -> dict[str, Any] | None:
    """The entry kept under *key* in *folder*, if it is one of layout *fmt* made for that key
    (raises OSError or ValueError where it cannot be read)."""
    data = json.loads(_path(folder, key).read_text(encoding="utf-8"))
    return data if isinstance(data, dict) and data.get("format") == fmt and data.get("key") == key else None


def keep(folder: Path, key: str, data: Any) -> None:
    """Write the JSON *data* under *key* in *folder*, whole or not at all (also with several runs
    at once); a folder that cannot be written to keeps nothing: the cache is an aid, never a
    reason to fail."""
    path = _path(folder, key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp",
                                         encoding="utf-8") as f:
            json.dump(data, f, separators=(",", ":"))
        os.replace(f.name, path)
    except (OSError, ValueError):
        return


def _result_data(r: EngineResult) -> dict[str, Any]:
    return {"engine": r.engine, "config": r.config, "players": r.players, "verdict": r.verdict.value,
            "method": r.method, "seconds": r.seconds, "states": r.states, "cut": r.cut,
            "trace": trace_data(r.trace), "witness": trace_data(r.witness), "cti": trace_data(r.cti)}


def trace_data(t: Trace | None) -> dict[str, Any] | None:
    """*t* as plain JSON data (its layout aside: :func:`trace_of` is given it back)."""
    if t is None:
        return None
    owner = getattr(t.drift.func, "__self__", None) if isinstance(t.drift, partial) else None  # Drift.matches
    drift = owner.safe if isinstance(owner, Drift) else None
    if t.drift is not None and drift is None:
        raise ValueError("a lasso whose drift is not a Drift's")
    return {"property": t.property_id, "config": t.config, "initial": list(t.initial),
            "steps": steps_data(t.steps),
            "role": t.role, "point": t.point, "message": t.message, "loop_start": t.loop_start,
            "player": t.player, "drift": None if drift is None else [[v, list(b)] for v, b in drift.items()]}


class _Game:
    """What replaying a game's traces needs, made when the first trace asks for it: the instances
    of the rules its steps *taken* (all of them, and the play after a state, where a loop rule's
    step is among them)."""

    def __init__(self, model: Model, config: Config, n: int, taken: set[str]):
        self.model, self.config, self.n = model, config, n
        self.layout = Layout.for_config(model.vocab, n, config)
        self._insts: tuple[Any, ...] | None = None
        self.loops = any(model.rule(r).graph for r in taken)  # (KeyError: a rule no longer there)
        self.taken = taken

    def result(self, d: dict[str, Any]) -> EngineResult:
        if (d["config"], d["players"]) != (self.config.name, self.n):
            raise ValueError("an entry of another game")
        return EngineResult(str(d["engine"]), self.config.name, self.n, Verdict(d["verdict"]), str(d["method"]),
                            float(d["seconds"]), self.trace(d["trace"]), self.trace(d["witness"]), int(d["states"]),
                            int(d["cut"]), self.trace(d["cti"]))

    def trace(self, d: dict[str, Any] | None) -> Trace | None:
        if d is None:
            return None
        t = trace_of(d, self.layout, self.config.name)
        if self._insts is None and not self.loops:  # the rules taken, with every clause they consult
            only = replace(self.model, rules=tuple(r for r in self.model.rules
                                                   if not r.is_transition or r.id in self.taken))
            self._insts = instances(only, self.layout, self.config.params, actions=self.config.actions)
        if self._insts is None:
            compiler = Compiler(self.model, self.layout, self.config.params)
            self._insts = instances(self.model, self.layout, self.config.params, actions=self.config.actions,
                                    compiler=compiler)
            moving, lay = game_drift(self.model, self.config), self.layout
            floors = {v.name: v.min for v in self.model.vocab.vars.values()}
            compiler.oracle = LocalLoops(self._insts, lambda: Folding(lay, moving, floors))
        # a counterexample to induction starts where induction assumed, not in an initial state
        try:
            replay(t, self._insts, initial_ok=t.role == "induction counterexample"
                   or is_initial(self.layout, self.config, t.initial, released=True))
        except (KeyError, OverflowError) as e:  # a graph name the play after a state cannot answer
            raise ReplayMismatch(f"{t.property_id}: a loop rule's step could not be replayed ({e})") from e
        return t




def steps_data(steps: tuple[Step, ...]) -> list[list[Any]]:
    """*steps* as plain JSON data."""
    return [[s.rule, s.actor, s.kind, list(s.state), list(s.because), s.card, s.event, s.part] for s in steps]


def steps_of(data: Any, layout: Layout) -> tuple[Step, ...]:
    """Steps kept by :func:`trace_data`, their states checked to be of *layout*."""
    return tuple(Step(str(rule), actor, str(kind), _state(after, layout), tuple(because), card, event, int(part))
                 for rule, actor, kind, after, because, card, event, part in data)


def trace_of(d: dict[str, Any], layout: Layout, config: str) -> Trace:
    """The trace kept by :func:`trace_data`, not yet replayed (raises ValueError, KeyError or
    TypeError where *d* is not one)."""
    drift = None
    if d["drift"] is not None:
        drift = partial(Drift({str(v): (lo, hi) for v, (lo, hi) in d["drift"]}).matches, layout)
    return Trace(str(d["property"]), config, layout, _state(d["initial"], layout), steps_of(d["steps"], layout),
                 str(d["role"]), str(d["point"]), str(d["message"]), d["loop_start"], d["player"], drift)


def _state(values: Any, layout: Layout) -> State:
    if not isinstance(values, list) or len(values) != len(layout.names):
        raise ValueError("a state of another layout")
    return tuple(values)
