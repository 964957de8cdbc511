"""Which edition of the rules a run checked, and what of the model does not apply to it: a
header for the terminal, the Markdown report and the JSON."""
from __future__ import annotations

from typing import Any

from verify.model.types import Model

__all__ = ["edition_text", "edition_markdown", "edition_json"]


def edition_text(model: Model) -> str:
    ed = model.edition
    where = f" ({ed.loc.file})" if ed.loc is not None else ""
    lines = [f"edition {ed.name}: {ed.title}{where}"]
    if ed.differs:
        lines.append(f"  rules whose meaning differs from its base's: {', '.join(ed.differs)}")
    if ed.removed:
        lines.append(f"  rules it lacks (current numbers): {', '.join(ed.removed)}")
    na = [(f"property {k}", v) for k, v in ed.not_applicable.items()] + \
         [(f"configuration {k}", v) for k, v in ed.configs_not_applicable.items()]
    if na:
        lines.append("  not applicable to this edition (not checked, no verdict):")
        lines += [f"    {what}: {why}" for what, why in na]
    lines.append("  (the case library holds today's rulings: it is not played against an edition)")
    return "\n".join(lines)


def edition_markdown(model: Model) -> str:
    ed = model.edition
    out = [f"## Edition {ed.name}\n", f"{ed.title}" + (f" ({ed.source})" if ed.source else "") + "\n"]
    rows = [f"| property `{k}` | {v} |" for k, v in ed.not_applicable.items()] + \
           [f"| configuration `{k}` | {v} |" for k, v in ed.configs_not_applicable.items()]
    if rows:
        out += ["Not applicable to this edition (not checked, no verdict):\n", "| what | why |", "|---|---|", *rows, ""]
    if ed.removed:
        out += ["Rules this edition lacks (current numbers):\n", "| rule | why |", "|---|---|",
                *[f"| {k} | {v} |" for k, v in ed.removed.items()], ""]
    return "\n".join(out) + "\n"


def edition_json(model: Model) -> dict[str, Any]:
    ed = model.edition
    return {"name": ed.name, "title": ed.title, "source": ed.source, "chain": list(ed.chain),
            "changed": dict(ed.changes), "differs": list(ed.differs), "removed": dict(ed.removed),
            "not_applicable": {"properties": dict(ed.not_applicable), "configs": dict(ed.configs_not_applicable)}}
