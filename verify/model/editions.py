"""Editions of the rules: an edition file of ``editions/`` says what it changes in the edition
it names as its base (the current rules of ``rules/``, or another edition).

An edition file is data like every model file::

    [edition]
    title = "Comprehensive Rules effective 1 October 2009"
    base = "current"

    [numbers]            # the base's numbers this edition gives another number
    "121" = "119"        # a whole section: 121.2 is 119.2, 121.1/effect is 119.1/effect
    "121.2c" = "119.2a"  # one rule (wins over its section)

    [[replace]]          # a rule of the base as this edition has it: only what differs
    rule = "104.2a"      # the base's number
    text = "..."
    when = "..."
    why = "what changed, and when"

    [[add]]              # a rule of this edition the base lacks, written in full
    [[remove]]           # a rule of the base this edition lacks: rule, why
    [[not_applicable]]   # a property or configuration that does not apply here: property/config, why

A replacement may give the rule's text in other languages (``texts = { fr = "..." }``).
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping, Protocol

from verify.errors import ModelError, SourceLoc, suggest
from verify.language.typecheck import TypeChecker
from verify.model.tomlfile import CR_NUMBER, RULE_ID, rule_order
from verify.model.tomlfile import TomlFile as _File
from verify.model.types import CURRENT, Edition, Rule, Vocabulary, renumber

__all__ = ["apply_edition", "edition_names", "MAX_CHAIN"]

MAX_CHAIN = 16  # editions one edition may stand on (a longer chain is a cycle)
_RULE_KEYS = ("id", "cites", "text", "kind", "actor", "card", "defines", "when", "then")
_MEANING = ("kind", "actor", "card", "defines", "when", "then")


class _Loader(Protocol):
    """What of the model loader an edition file is read with (verify.model.loader)."""

    root: Path
    diags: list[Any]

    def err(self, loc: SourceLoc, code: str, message: str) -> None: ...
    def display(self, path: Path) -> str: ...
    def keys(self, f: _File, table: dict[str, Any], allowed: Mapping[str, type | tuple[type, ...]],
             required: tuple[str, ...], path: tuple[object, ...], what: str) -> bool: ...
    def rule(self, f: _File, i: int, spec: Any, vocab: Vocabulary, checker: TypeChecker,
             table: str = "rule", extra: Mapping[str, type | tuple[type, ...]] | None = None) -> Rule | None: ...


def edition_names(root: Path) -> list[str]:
    """The editions a model folder has: the current one, then its edition files' names."""
    folder = root / "editions"
    return [CURRENT.name] + (sorted(p.stem for p in folder.glob("*.toml")) if folder.is_dir() else [])


def apply_edition(loader: _Loader, vocab: Vocabulary, rules: list[Rule], name: str) -> tuple[list[Rule], Edition]:
    """The rules of edition *name*, made from the current *rules* by the edition files from the
    current edition to *name*; errors go to the loader's diagnostics (pointing into the files)."""
    chain = _chain(loader, name)
    if chain is None:
        raise ModelError(loader.diags)
    origin = {r.id: r.id for r in rules}
    removed: dict[str, str] = {}
    maps: list[dict[str, str]] = []
    changes: dict[str, str] = {}
    not_applicable: dict[str, str] = {}
    configs_not_applicable: dict[str, str] = {}
    checker = TypeChecker(vocab, loader.diags)
    head: _File | None = None
    differs: list[str] = []
    where: dict[str, SourceLoc] = {}
    for f in chain:
        head = f
        rules, table, changes, differs = _one(loader, f, vocab, checker, rules, origin, removed)
        maps.append(table)
        for i, spec in enumerate(_tables(f, "not_applicable")):
            at = ("not_applicable", i)
            if not loader.keys(f, spec, {"property": str, "config": str, "why": str}, ("why",), at,
                               "not_applicable entry"):
                continue
            if ("property" in spec) == ("config" in spec):
                loader.err(f.loc(*at), "missing", "a not_applicable entry names one 'property' or one 'config'")
            elif "property" in spec:
                not_applicable[spec["property"]] = spec["why"]
                where[spec["property"]] = f.loc(*at, "property")
            else:
                configs_not_applicable[spec["config"]] = spec["why"]
                where[spec["config"]] = f.loc(*at, "config")
    assert head is not None
    meta = head.data.get("edition", {})
    edition = Edition(name, meta.get("title", name), meta.get("source", ""),
                      tuple(f.path.stem for f in chain), tuple(maps), removed, changes, tuple(differs),
                      dict(origin),
                      not_applicable, configs_not_applicable, head.loc("edition"), where)
    return sorted(rules, key=lambda r: rule_order(r.id)), edition


def _tables(f: _File, key: str) -> list[Any]:
    value = f.data.get(key, [])
    return value if isinstance(value, list) else []


def _chain(loader: _Loader, name: str) -> list[_File] | None:
    """The edition files from the current edition to *name*, *name*'s last."""
    folder = loader.root / "editions"
    files: list[_File] = []
    wanted, asked_by = name, SourceLoc(loader.display(folder))
    while wanted != CURRENT.name:
        path = folder / f"{wanted}.toml"
        if not path.is_file():
            have = edition_names(loader.root)
            loader.err(asked_by, "edition", f"no edition '{wanted}'{suggest(wanted, have)}; "
                       f"the editions are: {', '.join(have)}")
            return None
        f = _File(path, loader.display(path), loader.diags)
        if not f.ok:
            return None
        if len(files) >= MAX_CHAIN or any(g.path == path for g in files):
            loader.err(f.loc("edition", "base"), "edition", f"edition '{wanted}' stands on itself through its bases")
            return None
        loader.keys(f, f.data, {"edition": dict, "numbers": dict, "replace": list, "add": list, "remove": list,
                                "not_applicable": list}, (), (), path.name)
        meta = f.data.get("edition")
        if not isinstance(meta, dict) or not loader.keys(f, meta, {"title": str, "base": str, "source": str},
                                                          ("title", "base"), ("edition",), "[edition]"):
            if not isinstance(meta, dict):
                loader.err(f.loc(), "missing", "an edition file needs an [edition] table with its title and base")
            return None
        files.insert(0, f)
        wanted, asked_by = meta["base"], f.loc("edition", "base")
    return files


def _one(loader: _Loader, f: _File, vocab: Vocabulary, checker: TypeChecker, rules: list[Rule],
         origin: dict[str, str], removed: dict[str, str]
         ) -> tuple[list[Rule], dict[str, str], dict[str, str], list[str]]:
    """The rules after one edition file's changes to its base's *rules*; the file's renumbering
    table and what it says of each rule it changes. *origin* (rule id -> current id) and
    *removed* (current id -> why) are brought up to date."""
    by_id = {r.id: r for r in rules}
    table: dict[str, str] = {}
    numbers = f.data.get("numbers", {})
    for key, value in (numbers.items() if isinstance(numbers, dict) else ()):
        if not isinstance(value, str) or not RULE_ID.match(key) or not RULE_ID.match(value):
            loader.err(f.loc("numbers", key), "rule-id",
                       f"'{key}' = '{value}' must give a section, CR number or rule id another such number")
            continue
        table[key] = value
    changes: dict[str, str] = {}
    differs: list[str] = []
    gone: set[str] = set()
    for i, spec in enumerate(_tables(f, "remove")):
        at = ("remove", i)
        if not loader.keys(f, spec, {"rule": str, "why": str}, ("rule", "why"), at, "remove entry"):
            continue
        if spec["rule"] not in by_id:
            loader.err(f.loc(*at, "rule"), "rule-id",
                       f"the base edition has no rule '{spec['rule']}'{suggest(spec['rule'], by_id)}")
            continue
        gone.add(spec["rule"])
        removed[origin.get(spec["rule"], spec["rule"])] = spec["why"]
    replaced: dict[str, Rule] = {}
    for i, spec in enumerate(_tables(f, "replace")):
        at = ("replace", i)
        allowed = {k: (list if k == "cites" else str) for k in _RULE_KEYS} | {"rule": str, "why": str, "texts": dict}
        if not loader.keys(f, spec, allowed, ("rule", "why"), at, "replace entry"):
            continue
        base = by_id.get(spec["rule"])
        if base is None:
            loader.err(f.loc(*at, "rule"), "rule-id",
                       f"the base edition has no rule '{spec['rule']}'{suggest(spec['rule'], by_id)}")
            continue
        if spec["rule"] in gone or spec["rule"] in replaced:
            loader.err(f.loc(*at, "rule"), "duplicate", f"rule '{spec['rule']}' is changed twice by this edition")
            continue
        number = spec.get("id", renumber(base.id, table))
        if any(k in spec for k in _MEANING):  # its meaning changes: parse the rule as a whole
            merged = {"id": number, "cites": list(base.cites), "text": base.text, "kind": base.kind,
                      "when": base.when_src}
            for k, v in (("actor", base.actor), ("card", base.card), ("defines", base.defines)):
                if v is not None:
                    merged[k] = v
            if base.is_transition:
                merged["then"] = base.then_src
            merged |= {k: v for k, v in spec.items() if k in _RULE_KEYS}
            rule = loader.rule(f, i, merged, vocab, checker, table="replace")
            if rule is None:
                continue
        else:
            rule = replace(base, id=number, text=spec.get("text", base.text),
                           cites=tuple(spec.get("cites", [renumber(c, table) for c in base.cites])),
                           loc=f.loc(*at, "rule"))
        rule = replace(rule, texts=_texts(loader, f, at, spec))
        if not RULE_ID.match(rule.id):
            loader.err(f.loc(*at, "id"), "rule-id", f"rule id '{rule.id}' is not a CR number such as '104.3b'")
            continue
        replaced[base.id] = rule
        changes[rule.id] = spec["why"]
        if rule.meaning != base.meaning:
            differs.append(rule.id)
    out: list[Rule] = []
    new_origin: dict[str, str] = {}
    for r in rules:
        if r.id in gone:
            continue
        rule = replaced.get(r.id) or replace(r, id=renumber(r.id, table), cites=tuple(renumber(c, table) for c in r.cites))
        if rule.id != r.id:
            table.setdefault(r.id, rule.id)  # so that cites and actions naming the base's number follow it
        if r.id in origin:
            new_origin[rule.id] = origin[r.id]
        out.append(rule)
    for i, spec in enumerate(_tables(f, "add")):
        at = ("add", i)
        rule = loader.rule(f, i, {k: v for k, v in spec.items() if k not in ("why", "texts")} if isinstance(spec, dict)
                           else spec, vocab, checker, table="add")
        if rule is None:
            continue
        if not isinstance(spec.get("why", ""), str) or "why" not in spec:
            loader.err(f.loc(*at), "missing", "an added rule says 'why' (what this edition has that its base lacks)")
            continue
        out.append(replace(rule, texts=_texts(loader, f, at, spec)))
        changes[rule.id] = spec["why"]
        differs.append(rule.id)
    seen: dict[str, SourceLoc] = {}
    for r in out:
        if r.id in seen:
            loader.err(r.loc, "duplicate", f"this edition has two rules numbered '{r.id}' (the other: {seen[r.id]})")
        seen[r.id] = r.loc
    for c in (c for r in out for c in r.cites if not CR_NUMBER.match(c)):
        loader.err(f.loc(), "rule-id", f"cited '{c}' is not a CR number")
    origin.clear()
    origin.update(new_origin)
    return out, table, changes, differs


def _texts(loader: _Loader, f: _File, at: tuple[object, ...], spec: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    texts = spec.get("texts", {})
    if not isinstance(texts, dict):
        return ()
    out = []
    for lang, text in texts.items():
        if not isinstance(text, str) or not lang.isalpha() or len(lang) > 3:
            loader.err(f.loc(*at, "texts", lang), "type", f"'texts' gives a language code (e.g. fr) its text; not '{lang}'")
            continue
        out.append((lang, text))
    return tuple(out)
