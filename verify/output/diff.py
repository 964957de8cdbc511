"""A diff of two rule sets for people (text, Markdown: the two games side by side) and for
programs (JSON, each trace in the Informal Trace Format)."""
from __future__ import annotations

from itertools import zip_longest
from typing import Any

from verify.checking.differences import Difference, DiffResult
from verify.checking.trace import Trace
from verify.output.itf import trace_itf
from verify.output.steps import joined, step_rows

__all__ = ["diff_text", "diff_markdown", "diff_json"]

COLUMN = 60  # width of one side's column in the terminal


def _steps(t: Trace) -> list[str]:
    return [f"[{rule}] {who}, {kind}: {joined(ch)}" for _, rule, who, kind, _, ch in step_rows(t)]


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def _numbers(d: Difference) -> str:
    """The rule by its current number, and its numbers in A and B where they are others."""
    if d.number_a == d.number_b:
        return d.rule if d.number_a in (None, d.rule) else f"{d.rule} ({d.number_a} in A and B)"
    return f"{d.rule} ({d.number_a or 'none'} in A, {d.number_b or 'none'} in B)"


def _games(d: Difference) -> str:
    shown = ", ".join(d.games[:6]) + (f" and {len(d.games) - 6} more" if len(d.games) > 6 else "")
    noun = ("situation" if d.results_a or d.results_b else "parting step found by Z3" if "Z3" in d.result
            else "state only one side reaches")
    many = {"situation": "situations", "state only one side reaches": "states only one side reaches",
            "parting step found by Z3": "parting steps found by Z3"}[noun]
    return f"{d.situations} {noun if d.situations == 1 else many} in {shown}"


def _what(d: Difference) -> str:
    if "Z3" in d.result:
        return "a state of play the other never reaches from the same state (Z3, for all counter values)"
    return "a state of play the other never reaches" if not d.results_a else f"the result: {d.result}"


def _only(mine: tuple[str, ...], other: tuple[str, ...]) -> str:
    return "; ".join(r for r in mine if r not in other) or "none"


def _games_compared(r: DiffResult) -> int:
    return len({(g.config, g.players) for g in r.games} | {(g.config, g.players) for g in r.symbolic})


def diff_text(r: DiffResult, max_steps: int = 40, quiet: bool = False) -> str:
    """The diff for the terminal; *quiet*: one line per difference (the rule, what differs, where)
    and the summary."""
    if quiet:
        out = [f"{_numbers(d)}: {d.how} differs; {_games(d)}" for d in r.differences]
        out += [f"not settled: {g.config} ({g.players}p): {g.text}" for g in r.symbolic if not g.settled]
        out += [f"not settled: {g.config} ({g.players}p): a limit stopped the exploration" for g in r.games
                if not g.complete]
        verdict = ("no differences" if r.agree else f"{len({d.rule for d in r.differences})} rule(s) make a difference")
        return "\n".join(out + [f"summary: {verdict} in {_games_compared(r)} games"])
    lines = [f"A: {r.a}", f"B: {r.b}", "", "games (situations: the initial states; differ: those from which the results "
             "play can reach differ):"]
    for g in r.games:
        note = "" if g.complete else "  (a limit stopped the exploration: what it did not reach is not compared)"
        lines.append(f"  {g.config:<26} {g.players}p  {g.states_a:>9,} / {g.states_b:>9,} states  "
                     f"{g.situations:>7,} situations  {g.differing:>6,} differ{note}")
    for what, why in r.skipped:
        lines.append(f"  {what}: not compared: {why}")
    if r.symbolic:
        lines += ["", "for all counter values (Z3, every configuration and player count):"]
        lines += [f"  {g.config:<26} {g.players}p  {g.text}" for g in r.symbolic]
        lines += [f"  ({note})" for note in r.notes]
    if not r.symbolic:
        lines += [f"  ({note})" for note in r.notes]
    if r.agree:
        lines += ["", "no differences: A and B reach the same results from every situation of every game compared"
                  + ("" if r.settled else " that was explored in full")]
        return "\n".join(lines)
    lines += ["", f"differences, by the rule that makes them ({len(r.differences)}):"]
    for d in r.differences:
        lines += ["", f"{_numbers(d)}: {d.how} differs; {_games(d)}", f"  only {d.only_in} reaches {_what(d)}"]
        if d.results_a or d.results_b:
            lines += [f"  results only under A: {_only(d.results_a, d.results_b)}",
                      f"  results only under B: {_only(d.results_b, d.results_a)}"]
        lines += [
                  f"  start ({d.trace_a.config}): {d.trace_a.layout.show(d.trace_a.initial)}",
                  f"  {'step':>4}  {'under A':<{COLUMN}}  under B"]
        for i, (sa, sb) in enumerate(zip_longest(_steps(d.trace_a), _steps(d.trace_b), fillvalue=""), 1):
            if i > max_steps:
                lines.append(f"  ... {max(len(d.trace_a.steps), len(d.trace_b.steps)) - max_steps} more steps")
                break
            mark = " <- the games part here" if i == d.part + 1 else ""
            lines.append(f"  {i:>4}  {_cut(sa, COLUMN):<{COLUMN}}  {_cut(sb, COLUMN)}{mark}")
        for side, t in (("A", d.trace_a), ("B", d.trace_b)):
            steps = _steps(t)
            if d.part < len(steps):  # the step where the games part, whole
                lines.append(f"  {side}'s step {d.part + 1}: {steps[d.part]}")
        lines.append(f"  A: {d.trace_a.message}")
        lines.append(f"  B: {d.trace_b.message}")
    lines += ["", f"summary: {len({d.rule for d in r.differences})} rule(s) make a difference in "
              f"{len({g for d in r.differences for g in d.games})} of {_games_compared(r)} games"]
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def diff_markdown(r: DiffResult, command: str) -> str:
    out = [f"# Endgame diff: {r.a} against {r.b}\n", f"`{command}`\n",
           "| game | players | states A | states B | situations | differ |", "|---|--:|--:|--:|--:|--:|"]
    out += [f"| {g.config} | {g.players} | {g.states_a:,} | {g.states_b:,} | {g.situations:,} | {g.differing:,} |"
            for g in r.games]
    out += [f"\n{what}: not compared: {why}" for what, why in r.skipped]
    if r.symbolic:
        out += ["\nFor all counter values (Z3):\n", "| game | players | Z3 |", "|---|--:|---|"]
        out += [f"| {g.config} | {g.players} | {_cell(g.text)} |" for g in r.symbolic]
        out += [f"\n{note}." for note in r.notes]
    if r.agree:
        out.append("\nNo differences.")
    for d in r.differences:
        out += [f"\n## {_numbers(d)}\n", f"{d.how.capitalize()} differs; {_games(d)}. From the same start only "
                f"{d.only_in} reaches {_what(d)}.\n"]
        if d.results_a or d.results_b:
            out += [f"- results only under A: {_only(d.results_a, d.results_b)}",
                    f"- results only under B: {_only(d.results_b, d.results_a)}\n"]
        out += [
                f"Start ({d.trace_a.config}): `{d.trace_a.layout.show(d.trace_a.initial)}`\n",
                "| step | under A | under B |", "|--:|---|---|"]
        for i, (sa, sb) in enumerate(zip_longest(_steps(d.trace_a), _steps(d.trace_b), fillvalue=""), 1):
            mark = " **(the games part here)**" if i == d.part + 1 else ""
            out.append(f"| {i}{mark} | {_cell(sa)} | {_cell(sb)} |")
        out += ["", f"A: {d.trace_a.message}  ", f"B: {d.trace_b.message}"]
    return "\n".join(out) + "\n"


def diff_json(r: DiffResult, command: str) -> dict[str, Any]:
    return {"command": command, "a": r.a, "b": r.b, "agree": r.agree, "settled": r.settled,
            "games": [{"config": g.config, "players": g.players, "states_a": g.states_a, "states_b": g.states_b,
                       "situations": g.situations, "differing": g.differing, "complete": g.complete,
                       "cut": g.cut} for g in r.games],
            "skipped": [{"what": w, "why": y} for w, y in r.skipped], "notes": list(r.notes),
            "symbolic": [{"config": g.config, "players": g.players, "outcome": g.outcome, "text": g.text}
                         for g in r.symbolic],
            "differences": [{"rule": d.rule, "number_a": d.number_a, "number_b": d.number_b, "how": d.how,
                             "result": d.result, "only_in": d.only_in, "results_a": list(d.results_a),
                             "results_b": list(d.results_b), "games": list(d.games), "situations": d.situations,
                             "shared_steps": d.part, "trace_a": trace_itf(d.trace_a), "trace_b": trace_itf(d.trace_b)}
                            for d in r.differences]}
