"""Build the deliberately broken copies of model/ described in tests/models/broken.toml.

Run ``python tests/brokenmodels.py`` after changing model/ or broken.toml; the
test suite checks that the committed copies are what this script makes.
"""
from __future__ import annotations

import shutil
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "model"
SPEC = ROOT / "tests" / "models" / "broken.toml"
OUT = ROOT / "tests" / "models"


@dataclass(frozen=True)
class Broken:
    name: str
    kind: str  # "violated" or "vacuous"
    property: str
    rule: str | None
    why: str
    edits: tuple[tuple[str, str, str], ...]
    z3: bool = True  # the Z3 engine refutes it too (loop properties: only through a lasso)
    z3_config: str | None = None  # the game Z3 refutes it on (all games when None)
    both: bool = False  # checked with both engines too: exploration alone does not see it
    explored: bool = True  # False: the violation lies in a game only Z3 checks (explore_players = [])
    explicit_config: str | None = None  # the game exploration refutes it on (all games when None)

    @property
    def path(self) -> Path:
        return OUT / self.kind / self.name


def specs() -> list[Broken]:
    data = tomllib.loads(SPEC.read_text(encoding="utf-8"))
    return [Broken(b["name"], b["kind"], b["property"], b.get("rule"), b["why"],
                   tuple((e["file"], e["replace"], e["with"]) for e in b["edit"]), b.get("z3", True),
                   b.get("z3_config"), b.get("both", False), b.get("explored", True), b.get("explicit_config"))
            for b in data["broken"]]


def materialize(spec: Broken, dest: Path) -> None:
    """Write the broken copy of model/ described by *spec* into *dest* (its rules, properties and
    configurations; not the case library or the account of mutants, which the copies are not
    checked against)."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(MODEL, dest, ignore=shutil.ignore_patterns("__pycache__", "*.py", "scenarios", "mutants.toml", "editions"))
    for file, old, new in spec.edits:
        target = dest / file
        text = target.read_text(encoding="utf-8")
        if text.count(old) != 1:
            raise SystemExit(f"{spec.name}: the text to replace occurs {text.count(old)} times in {file}")
        target.write_text(text.replace(old, new), encoding="utf-8")
    (dest / "BROKEN.md").write_text(
        f"# {spec.name}\n\n{spec.why}\n\nExpected: `{spec.property}` is {spec.kind}"
        + (f"; the counterexample's last step fires rule {spec.rule}." if spec.rule else ".")
        + "\n\nBuilt from model/ by tests/brokenmodels.py; do not edit by hand.\n", encoding="utf-8")


def main() -> None:
    for kind in ("violated", "vacuous"):
        shutil.rmtree(OUT / kind, ignore_errors=True)
    for spec in specs():
        materialize(spec, spec.path)
        print(spec.path.relative_to(ROOT))


if __name__ == "__main__":
    sys.exit(main())
