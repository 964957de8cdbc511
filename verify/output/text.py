"""Plain-text writers: traces as scripts, the verdict table, scenario outcomes."""
from __future__ import annotations

from collections import Counter
from io import StringIO
from typing import Iterable

from rich.console import Console
from rich.table import Table

from verify.checking.trace import Trace
from verify.checking.verdict import CheckResult, Verdict
from verify.output.steps import actor_name, changes_text, joined, loop_note, step_rows
from verify.scenarios.library import CASE_STATUSES, CaseResult
from verify.scenarios.simulate import Simulation, expect_text

__all__ = ["trace_text", "verdict_table", "aligned", "cut_line", "short_how", "results_text", "scenario_text", "cases_text", "cache_text", "SHOWN_STEPS",
           "too_long"]

# The most steps of one trace printed on a terminal: the first two thirds and the last third of
# a longer trace are shown, and the whole of it goes to the report files.
SHOWN_STEPS = 300


def _shown(count: int, limit: int | None) -> tuple[int, int]:
    """(head, tail): how many of *count* steps to show from the start and from the end."""
    if limit is None or count <= limit:
        return count, 0
    return limit * 2 // 3, limit - limit * 2 // 3


def _hidden(i: int, count: int, limit: int | None, where: str, lines: list[str]) -> bool:
    """Whether step *i* (1-based) of *count* is left out of a terminal's view; at the first one
    left out, *lines* gets the line that says how many are and where the whole trace is."""
    head, tail = _shown(count, limit)
    if not head < i <= count - tail:
        return False
    if i == head + 1:
        lines.append(f"    ... {count - head - tail:,} steps not shown ({count:,} in all)"
                     + (f"; the whole trace is in {where}" if where else ""))
    return True


def too_long(sim: Simulation, limit: int = SHOWN_STEPS) -> bool:
    """Whether a trace of *sim* has more steps than a terminal shows."""
    return any(len(o.trace.steps) > limit or len(o.loop) > limit for o in sim.outcomes)


def trace_text(trace: Trace, max_steps: int | None = None, where: str = "") -> str:
    """A trace as a script: the start, one line per step, then what it shows.

    Each step names the rule that fired, the acting player, whether the action
    was mandatory or optional, and the variables it changed. With *max_steps*, a longer
    trace shows its first and last steps only, and says where the whole of it is.
    """
    lay = trace.layout
    lines = [f"{trace.role} for {trace.property_id} ({trace.config}, {lay.n} players, "
             f"{len(trace.steps)} step{'s' if len(trace.steps) != 1 else ''}):",
             f"  start: {lay.show(trace.initial)}"]
    for i, rule, who, mand, because, changes in step_rows(trace):
        if _hidden(i, len(trace.steps), max_steps, where, lines):
            continue
        changed = joined(changes)
        marker = "  <- loop starts here" if trace.loop_start is not None and i - 1 == trace.loop_start else ""
        by = f"  [by {because}]" if because else ""
        lines.append(f"  step {i:>2}  [{rule}] {who}, {mand}: {changed}{by}{marker}")
    if trace.loop_start is not None:
        lines.append(f"  {loop_note(trace)}")
    lines.append(f"  {trace.message}")
    return "\n".join(lines)


LINE = 100  # columns of a property's line without -v


def short_how(r: CheckResult) -> str:
    """How a verdict was reached, in a few words: what settled it and on how many games (the
    whole method is in the reports, and under -v)."""
    def games(engine: str, verdict: Verdict) -> set[tuple[str, int]]:
        return {(e.config, e.players) for e in r.results if e.engine == engine and e.verdict is verdict}
    if r.verdict is Verdict.VIOLATED:
        e = next((e for e in r.results if e.verdict is Verdict.VIOLATED), None)
        if e is None:
            return r.method
        steps = f", {len(e.trace.steps)} steps" if e.trace is not None else ""
        return f"counterexample on {e.config} ({e.players}p){steps}"
    everywhere = {(e.config, e.players) for e in r.results}
    if r.verdict in (Verdict.UNKNOWN, Verdict.VACUOUS):
        return f"{_games(len(everywhere))}; why below"
    parts = []
    explored = games("explicit", Verdict.HOLDS)
    if explored:
        states = sum(e.states for e in r.results if e.engine == "explicit" and e.verdict is Verdict.HOLDS)
        parts.append(f"explored {_games(len(explored))} ({_short(states)} states)")
    proved = games("z3", Verdict.HOLDS)
    if proved:
        parts.append(f"proved {len(proved)} by Z3")
    unreachable = games("z3", Verdict.VACUOUS) - explored - proved
    if unreachable:
        parts.append(f"premise unreachable on {len(unreachable)} (Z3)")
    bounded = ({k for k in everywhere if k not in explored | proved | unreachable}
               & (games("explicit", Verdict.BOUNDED) | games("z3", Verdict.BOUNDED)))
    if bounded:  # what the verdict rests on comes first
        parts.insert(0, f"within bounds {_games(len(bounded))} declare{'s' if len(bounded) == 1 else ''}"
                     if r.declared else f"only within bounds on {_games(len(bounded))}")
    if r.results and all(e.cached for e in r.results):
        parts.append("cached")
    return "; ".join(parts) or r.method


def _games(n: int) -> str:
    return "1 game" if n == 1 else f"{n} games"


def cut_line(line: str, width: int = LINE) -> str:
    """*line* cut to *width* columns at a word; a cut that would fall inside a parenthesis (as in
    '(e.g. Platinum ...') goes before the parenthesis, unless that leaves less than half the line.

    >>> cut_line("An effect exiles a card in play (e.g. a flicker ability), and its abilities leave", 50)
    'An effect exiles a card in play...'
    """
    if len(line) <= width:
        return line
    kept = line[:width - 3].rsplit(" ", 1)[0]
    opened = kept.rfind("(")
    if opened > kept.rfind(")") and opened >= width // 2:
        kept = kept[:opened]
    return kept.rstrip(" ,;(") + "..."


def _short(n: int) -> str:
    return f"{n / 1_000_000:.1f}M" if n >= 1_000_000 else f"{n / 1000:.0f}k" if n >= 10_000 else f"{n:,}"


VERDICT_WIDTH = max(len(v.value) for v in Verdict)
TIME_WIDTH = 8  # '1234.56s'


def aligned(rows: list[tuple[str, ...]], header: tuple[str, ...] | None = None, right: tuple[int, ...] = (),
            min_widths: tuple[int, ...] = (), gap: int = 2) -> list[str]:
    """*rows* as lines of columns laid out by rich (each as wide as its widest entry, so they never
    misalign), one line a row, nothing wrapped; *right*: the columns justified right."""
    table = Table(box=None, pad_edge=False, show_edge=False, show_header=header is not None, padding=(0, gap, 0, 0))
    for i, name in enumerate(header or ("",) * (len(rows[0]) if rows else 0)):
        table.add_column(name, justify="right" if i in right else "left", no_wrap=True,
                         min_width=min_widths[i] if i < len(min_widths) else None)
    for row in rows:
        table.add_row(*row)
    out = StringIO()
    Console(file=out, width=100_000, color_system=None, highlight=False, emoji=False, markup=False).print(table)
    return [line.rstrip() for line in out.getvalue().splitlines()]


def verdict_table(results: list[CheckResult], verbose: bool) -> list[str]:
    """The verdict table as lines: verdict, time and 'property: how' cut to LINE columns at a word;
    with *verbose*, property, the rules it protects, verdict, time and the whole method."""
    if verbose:
        return aligned([(r.property_id, ", ".join(r.protects), r.verdict.value, f"{r.seconds:.2f}s", r.method)
                        for r in results], ("property", "protects", "verdict", "time", "how"), right=(3,))
    rest = LINE - VERDICT_WIDTH - TIME_WIDTH - 4
    return aligned([(r.verdict.value, f"{r.seconds:.2f}s", cut_line(f"{r.property_id}: {short_how(r)}", rest))
                    for r in results], ("verdict", "time", "property: how"), right=(1,),
                   min_widths=(VERDICT_WIDTH, TIME_WIDTH))


def results_text(results: Iterable[CheckResult], *, traces: bool = True, witnesses: bool = False,
                 max_steps: int | None = None, traces_dir: str = "", quiet: bool = False,
                 verbose: bool = False) -> str:
    """The verdict table, then each violation's trace (at most *max_steps* steps of it, the
    whole in *traces_dir*), each unknown's reason and the first counterexample to induction.
    *quiet*: the table's lines of the properties that do not pass only; *verbose*: each line
    with the rules its property protects and the whole method, every game named."""
    results = list(results)

    def shown(t: Trace, stem: str) -> str:
        return trace_text(t, max_steps, f"{traces_dir}/{stem}.txt" if traces_dir else "")
    listed = [r for r in results if not (quiet and r.ok)]
    lines = verdict_table(listed, verbose) if listed or not quiet else []
    for r in results:
        if traces and r.verdict is Verdict.VIOLATED and r.trace is not None:
            lines += ["", shown(r.trace, f"{r.property_id}.{r.trace.role}")]
        if r.verdict in (Verdict.UNKNOWN, Verdict.VACUOUS) or (r.verdict is Verdict.BOUNDED and not r.ok):
            lines += ["", f"{r.property_id}: {r.verdict.value}: {r.method}"]
        ctis = [e.cti for e in r.results if e.cti is not None]
        if traces and r.verdict is Verdict.UNKNOWN and ctis:  # why Z3's induction failed: the first game's
            lines += ["", shown(ctis[0], f"{r.property_id}.cti.{ctis[0].config}-{ctis[0].layout.n}p")]
            if len(ctis) > 1:
                lines.append(f"  (and {len(ctis) - 1} more game(s): see the reports)")
        if witnesses and r.witness is not None:
            lines += ["", shown(r.witness, f"{r.property_id}.{r.witness.role}")]
    counts = {v: sum(1 for r in results if r.verdict is v) for v in Verdict}
    lines += ["", "summary: " + ", ".join(f"{counts[v]} {v.value}" for v in Verdict if counts[v])]
    return "\n".join(lines).lstrip("\n")


def cache_text(results: Iterable[CheckResult], folder: str, cases: Iterable[CaseResult] | None = None) -> str:
    """'cache: 12 of 36 games and 280 of 283 scenarios reused from .endgame-cache (...)': how
    many games' results (and scenarios' outcomes) an earlier run had kept, which this one reused."""
    games = {(e.config, e.players): e.cached for r in results for e in r.results}
    played = list(cases) if cases is not None else []
    scenarios = f" and {sum(c.cached for c in played)} of {len(played)} scenarios" if played else ""
    return (f"cache: {sum(games.values())} of {len(games)} games{scenarios} reused from {folder} (their traces "
            "replayed; --no-cache checks every game again)")


def _outcome_lines(sim: Simulation, index: int, max_steps: int | None, where: str) -> list[str]:
    o = sim.outcomes[index]
    t, lay, events = o.trace, sim.layout, sim.scenario.events
    lines = [f"outcome {index + 1} of {len(sim.outcomes)}: {o.label}"
             + (f"  (decided by {o.decided_by[0]}" + (f"; {', '.join(o.decided_by[1:])}" if o.decided_by[1:] else "")
                + ")" if o.decided_by else "")]
    prev = t.initial
    for i, step in enumerate(t.steps, 1):
        if _hidden(i, len(t.steps), max_steps, where, lines):
            prev = step.state
            continue
        if step.event is not None and step.part <= 0:
            e = events[step.event]
            lines.append(f"  event {e.number} (line {e.loc.line}): {e.text}" + (f"  -- {e.note}" if e.note else ""))
        changes = changes_text(lay, prev, step.state)
        by = f"  [by {', '.join(step.because)}]" if step.because else ""
        lines.append(f"    step {i:>2}  [{step.rule}] {actor_name(step.actor, step.card, lay.cards)}, "
                     f"{step.mandatoriness}: {changes}{by}")
        prev = step.state
    if o.loop:
        lines.append(f"  the loop {o.decided_by[0]} saw: from the state before step {len(t.steps)}, "
                     "these steps repeat with nobody able to stop them:")
        prev = t.states[-2]
        for j, step in enumerate(o.loop, 1):
            if _hidden(j, len(o.loop), max_steps, where, lines):
                prev = step.state
                continue
            changes = changes_text(lay, prev, step.state)
            lines.append(f"    loop {j:>2}  [{step.rule}] {actor_name(step.actor, step.card, lay.cards)}, "
                         f"{step.mandatoriness}: {changes}")
            prev = step.state
        if o.loop[-1].state != t.states[-2]:
            lines.append("  back where it began up to counters that run away past every threshold a rule compares "
                         f"them with ({changes_text(lay, t.states[-2], o.loop[-1].state)}): every round repeats "
                         "the same steps, further out")
    lines.append(f"  end: {lay.show(t.final)}")
    if o.why:
        lines.append(f"  the search between events stopped at {o.why}")
    return lines


def scenario_text(sim: Simulation, max_steps: int | None = None, where: str = "") -> str:
    """Every outcome with its trace: events as headings, each step with its CR number. With
    *max_steps*, a longer trace shows its first and last steps only, and says *where* the
    whole of it is."""
    sc, lay = sim.scenario, sim.layout
    lines = [f"scenario {sc.path}: {sc.title}", f"source: {sc.source}",
             "players: " + ", ".join(f"P{p} = {name}" for p, name in enumerate(sc.players))
             + (f"; cards: {', '.join(lay.cards)}" if lay.cards else ""),
             f"start: {lay.show(sim.initial)}", ""]
    for i in range(len(sim.outcomes)):
        lines += _outcome_lines(sim, i, max_steps, where) + [""]
    lines += [f"note: {n}" for n in sim.notes]
    lines.append(f"{len(sim.outcomes)} outcome{'s' if len(sim.outcomes) != 1 else ''}: "
                 + "; ".join(sim.labels) + f"  ({sim.states:,} states explored)")
    lines.append(expect_text(sim))
    return "\n".join(lines)


def cases_text(cases: Iterable[CaseResult], folder: str, *, traces: bool = True, max_steps: int | None = None,
               traces_dir: str = "") -> str:
    """Every scenario that did not end as its ruling says, with all its outcomes and their
    traces (at most *max_steps* steps each, the whole in *traces_dir*); then the case
    library's summary line and the list of those scenarios."""
    cases = list(cases)
    if not cases:
        return f"case library: none (no scenario files in {folder})"
    failed = [c for c in cases if not c.ok]
    lines = [line for c in failed for line in (
        scenario_text(c.sim, max_steps, f"{traces_dir}/scenario.{c.name}.txt" if traces_dir else ""), "")
    ] if traces else []
    counts = Counter(c.status for c in cases)
    lines.append(f"case library: {len(cases)} scenario{'s' if len(cases) != 1 else ''} in {folder}: "
                 + ", ".join(f"{counts[s]} {s}" for s in CASE_STATUSES if counts[s]))
    lines += [f"  {c.status}: {c.name}: {expect_text(c.sim)}" for c in failed]
    return "\n".join(lines)
