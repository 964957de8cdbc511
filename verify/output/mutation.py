"""Writers for `verify mutate`: the score, and every surviving mutant with its edit and why
no check caught it (or the model's explanation of it)."""
from __future__ import annotations

from typing import Any

from verify.mutation.report import MutationReport, Outcome

__all__ = ["mutation_text", "mutation_markdown", "mutation_json"]


def _score_line(r: MutationReport) -> str:
    n = len(r.outcomes)
    survived, explained = r.of("survived"), [o for o in r.of("survived") if r.explanation(o) is not None]
    line = (f"mutation score: {len(r.of('killed'))}/{n} mutants caught ({100 * r.score:.1f}%); "
            f"{len(survived)} survived ({len(explained)} explained in mutants.toml, "
            f"{len(r.unexplained)} not)")
    if r.of("error"):
        line += f"; {len(r.of('error'))} broke the checker"
    return line


def _survivor(o: Outcome, r: MutationReport) -> list[str]:
    m = o.mutant
    lines = [f"  {m.key}  ({m.loc})", f"    edit: {m.edit}"]
    e = r.explanation(o)
    if e is None:
        lines.append(f"    not caught: {o.detail}; explain it in mutants.toml, or add a property or a scenario")
    else:
        if e.edit and e.edit != m.edit:
            lines.append(f"    the explanation ({e.loc}) was written for another edit: {e.edit}")
        lines.append(f"    explained: {e.why}")
    return lines


def mutation_text(r: MutationReport) -> str:
    lines: list[str] = []
    unaccounted = {o.mutant.key for o in r.unexplained} | {o.mutant.key for o, _ in r.mismatched}
    if unaccounted:
        lines.append("survivors without a valid explanation:")
        for o in r.of("survived"):
            if o.mutant.key in unaccounted:
                lines += _survivor(o, r)
    explained = [o for o in r.of("survived") if o.mutant.key not in unaccounted]
    if explained:
        lines.append(f"survivors explained in mutants.toml: {len(explained)}"
                     + "".join(f"\n  {o.mutant.key}: {o.mutant.edit}" for o in explained))
    for o in r.of("error"):
        lines.append(f"broke the checker: {o.mutant.key} ({o.mutant.loc}): {o.mutant.edit}: {o.by}: {o.detail}")
    for o in r.caught_though_explained:
        lines.append(f"caught now, though mutants.toml explains it: {o.mutant.key} (by {o.by}): the entry can go")
    for o, e in r.moved:
        lines.append(f"renumbered: the entry '{e.mutant}' ({e.loc}) accounts for {o.mutant.key}, the mutant "
                     f"with its edit now; write that key there")
    lines.append(_score_line(r))
    return "\n".join(lines)


def mutation_markdown(r: MutationReport, command: str) -> str:
    out = ["# Endgame mutation report", "", f"Command: `{command}`", "", _score_line(r), "",
           "| mutant | where | edit | result | caught by / why not |", "|---|---|---|---|---|"]
    for o in r.outcomes:
        m = o.mutant
        e = r.explanation(o)
        why = o.by if o.status == "killed" else (f"explained: {e.why}" if e else o.detail)
        edit = m.edit.replace("|", "\\|")
        status = o.status if o.status == "killed" or e else f"**{o.status}**"
        out.append(f"| `{m.key}` | {m.loc} | {edit} | {status} | {why.replace('|', '/')} |")
    return "\n".join(out) + "\n"


def mutation_json(r: MutationReport, command: str) -> dict[str, Any]:
    return {
        "command": command,
        "ok": r.ok,
        "score": round(r.score, 4),
        "mutants": len(r.outcomes),
        "killed": len(r.of("killed")),
        "survived": len(r.of("survived")),
        "errors": len(r.of("error")),
        "outcomes": [{"key": o.mutant.key, "rule": o.mutant.rule, "operator": o.mutant.operator,
                      "part": o.mutant.part, "file": o.mutant.loc.file, "line": o.mutant.loc.line,
                      "col": o.mutant.loc.col, "edit": o.mutant.edit, "result": o.status, "by": o.by,
                      "detail": o.detail, "explained": (e.why if (e := r.explanation(o)) else None),
                      "explained_as": e.mutant if e else None,
                      "seconds": round(o.seconds, 3)} for o in r.outcomes],
    }
