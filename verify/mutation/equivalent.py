"""The model's account of its surviving mutants: ``mutants.toml`` beside ``rules/``.

Each entry names one mutant by the key ``verify mutate`` prints for it and says why no check
can catch it (an equivalent mutant: the edit changes no game the model can reach), or why it
is left for later. A survivor without an entry fails ``verify mutate``; an entry whose mutant
no longer exists or is now caught is reported, so the file cannot go stale silently.

    [[equivalent]]
    mutant = "104.1 then drop-conjunct #3"
    edit = "`would_lose[q]` deleted"   # optional: checked against the mutant, so a changed rule shows
    why = "..."
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from verify.errors import ModelError, SourceLoc
from verify.model.loader import _Loader
from verify.model.tomlfile import TomlFile as _File
from verify.model.types import Model

__all__ = ["FILE", "Explanation", "load_explanations"]

FILE = "mutants.toml"


@dataclass(frozen=True)
class Explanation:
    mutant: str
    why: str
    loc: SourceLoc
    edit: str = ""  # the edit as verify mutate showed it when the entry was written (optional)


def load_explanations(model: Model) -> dict[str, Explanation]:
    """The entries of the model's mutants.toml by mutant key (none without the file)."""
    path = Path(model.root) / FILE
    if not path.is_file():
        return {}
    loader = _Loader(Path(model.root))
    f = _File(path, loader.display(path), loader.diags)
    out: dict[str, Explanation] = {}
    if f.ok and loader.keys(f, f.data, {"equivalent": list}, (), (), FILE):
        for i, entry in enumerate(f.data.get("equivalent", [])):
            at: tuple[object, ...] = ("equivalent", i)
            if not isinstance(entry, dict):
                loader.err(f.loc(*at), "type", "each [[equivalent]] is a table with 'mutant' and 'why'")
                continue
            if not loader.keys(f, entry, {"mutant": str, "why": str, "edit": str}, ("mutant", "why"), at, "[[equivalent]]"):
                continue
            if entry["mutant"] in out:
                loader.err(f.loc(*at, "mutant"), "duplicate", f"mutant '{entry['mutant']}' is explained twice")
                continue
            if not entry["why"].strip():
                loader.err(f.loc(*at, "why"), "missing", "say why no check can catch this mutant")
                continue
            out[entry["mutant"]] = Explanation(entry["mutant"], entry["why"], f.loc(*at, "mutant"), entry.get("edit", ""))
    if loader.diags:
        raise ModelError(loader.diags)
    return out
