"""The ``verify`` command: a thin click layer over :mod:`verify.runner` and the writers.

Exit status: 0 every checked property holds; 1 a property is violated, unknown
or vacuous; 2 bad input (a model file, a property id, an option); 3 an internal
error in Endgame itself (with its traceback).
"""
from __future__ import annotations

import gc
import json
import os
import re
import shlex
import shutil
import sys
import traceback
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Callable

import click

from verify.checking.cache import DEFAULT_CACHE_DIR
from verify.checking.diff import diff_models
from verify.symbolic.product import DEFAULT_PRODUCT_DEPTH, DEFAULT_PRODUCT_RLIMIT
from verify.checking.runner import ENGINES, EXPLORE_FIRST, Options, check, explore_game, games, select
from verify.checking.symbolic import (
    DEFAULT_DEPTH,
    DEFAULT_RLIMIT,
    DEFAULT_SEARCH_RLIMIT,
    DEFAULT_TIMEOUT_MS,
)
from verify.checking.verdict import CheckResult
from verify.errors import ModelError, ReplayMismatch, UsageError, VerifyError, suggest
from verify.explicit.explore import cyclic_components
from verify.model.editions import edition_names
from verify.model.loader import MAX_PLAYERS, bundled_model_dir, display_path, load_model
from verify.model.types import CURRENT, Model
from verify.mutation.equivalent import load_explanations
from verify.mutation.operators import OPERATORS, mutants
from verify.mutation.report import MutationReport, Outcome
from verify.mutation.run import baseline, run_mutants
from verify.output.ci import junit_xml, sarif_log
from verify.output.diff import diff_json, diff_markdown, diff_text
from verify.output.dot import graph_dot, scenario_dot, trace_dot
from verify.output.edition import edition_json, edition_markdown, edition_text
from verify.output.itf import results_json, scenario_json, trace_itf
from verify.output.htmlreport import results_html
from verify.output.markdown import cases_markdown, results_markdown
from verify.output.progress import RunProgress, shows_progress
from verify.output.mutation import mutation_json, mutation_markdown, mutation_text
from verify.output.text import SHOWN_STEPS, aligned, cut_line, cache_text, cases_text, results_text, scenario_text, too_long, trace_text
from verify.scenarios.cache import CaseCache
from verify.scenarios.diff import diff_scenario
from verify.scenarios.format import load_scenario
from verify.scenarios.library import (
    LIBRARY,
    CaseResult,
    library_files,
    library_played,
    load_library,
    play_library,
)
from verify.scenarios.simulate import simulate
from verify.version import __version__

MAX_RLIMIT = 10**12  # Z3 resource units: far beyond any budget a run could spend

EXIT_OK, EXIT_FAIL, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3

EXIT_CODES = """\b
Exit status:
  0  every checked property holds (and, for `all`, every scenario of the case library ends as expected)
  1  some property is violated, unknown or vacuous (or a scenario ends otherwise, or unknown)
  2  bad input: a model file, a property id or an option
  3  an internal error in Endgame (please report it, with the traceback)"""


def _guard(fn: Callable[..., int]) -> Callable[..., None]:
    """Map results and errors to exit codes; user errors never show a traceback."""
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            code = fn(*args, **kwargs)
        except ModelError as err:
            for d in err.diagnostics:
                click.echo(str(d), err=True)
            n = len(err.diagnostics)
            click.echo(f"{n} error{'s' if n != 1 else ''} {err.subject}; {err.undone}", err=True)
            code = EXIT_INPUT
        except ReplayMismatch:  # a trace the model's own semantics does not reproduce: a bug in Endgame
            traceback.print_exc()
            click.echo("internal error in Endgame: a trace did not replay (exit 3)", err=True)
            code = EXIT_INTERNAL
        except VerifyError as err:
            click.echo(f"error: {err}", err=True)
            code = EXIT_INPUT
        except (click.exceptions.Exit, click.ClickException, KeyboardInterrupt):
            raise
        except BrokenPipeError:  # the reader went away (`verify list | head`): nothing is wrong here
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
            code = EXIT_OK
        except Exception:  # an internal bug: keep the traceback
            traceback.print_exc()
            click.echo("internal error in Endgame (exit 3)", err=True)
            code = EXIT_INTERNAL
        sys.exit(code)
    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


EDITION_OPTION = click.option(
    "--edition", default=None, metavar="NAME",
    help="An edition of the rules in the model's editions/ folder (e.g. 2009) instead of the current "
         "rules; `verify list --editions` names them.")


def _model(rules: str | None, edition: str | None = None) -> Model:
    model = load_model(Path(rules) if rules else None, edition)
    for w in model.warnings:
        click.echo(str(w), err=True)
    return model


def _inapplicable(command: str, **given: tuple[bool, str]) -> None:
    """Say on standard error that an option given to *command* does not apply to it, and why
    (every command takes the common options --json, --no-reports and --quiet)."""
    for name, (on, why) in given.items():
        if on:
            click.echo(f"note: --{name.replace('_', '-')} does not apply to `verify {command}`: {why}", err=True)


QUIET = click.option("--quiet", "-q", is_flag=True,
                     help="Print only what fails (its line, trace or reason) and a summary: for CI logs.")
NO_REPORTS = click.option("--no-reports", is_flag=True, help="Write no report files.")
AS_JSON = click.option("--json", "as_json", is_flag=True, help="Print as JSON.")


def _command() -> str:
    return "verify " + " ".join(shlex.quote(a) for a in sys.argv[1:])


def write_reports(results: list[CheckResult], model: Model, directory: str,
                  cases: list[CaseResult] | None = None) -> Path:
    """latest.md, index.html, latest.json, run.txt and traces/ (emptied first: no trace outlives its run);
    with *cases*, the case library in both reports and the traces of every scenario that did
    not end as its ruling says."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    command = _command()
    (out / "run.txt").write_text(command + "\n", encoding="utf-8")
    markdown = results_markdown(results, command, display_path(model.root))
    if model.edition is not CURRENT:
        head, _, rest = markdown.partition("\n## ")
        markdown = head + "\n" + edition_markdown(model) + ("## " + rest if rest else "")
    if cases is not None:
        markdown += cases_markdown(cases, _library(model))
    (out / "latest.md").write_text(markdown, encoding="utf-8")
    (out / "index.html").write_text(results_html(results, command, display_path(model.root), cases), encoding="utf-8")
    data = _json(results, model, command, cases)
    # compact: with the case library's traces it runs to megabytes, which Python's encoder writes
    # with indentation several times slower (its C encoder only writes without)
    (out / "latest.json").write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    traces = out / "traces"
    if traces.is_dir():
        shutil.rmtree(traces)
    for r in results:
        for t in (r.trace, r.witness):
            if t is None:
                continue
            traces.mkdir(exist_ok=True)
            stem = f"{r.property_id}.{t.role}"
            (traces / f"{stem}.txt").write_text(trace_text(t) + "\n", encoding="utf-8")
            (traces / f"{stem}.itf.json").write_text(json.dumps(trace_itf(t), indent=2) + "\n",
                                                     encoding="utf-8")
            (traces / f"{stem}.dot").write_text(trace_dot(t) + "\n", encoding="utf-8")
        for e in r.results:  # why Z3's induction failed, per game (not once the property is refuted)
            if e.cti is not None and r.trace is None:
                traces.mkdir(exist_ok=True)
                (traces / f"{r.property_id}.cti.{e.config}-{e.players}p.txt").write_text(
                    trace_text(e.cti) + "\n", encoding="utf-8")
    for c in cases or ():
        if not c.ok:
            traces.mkdir(exist_ok=True)
            (traces / f"scenario.{c.name}.txt").write_text(scenario_text(c.sim) + "\n", encoding="utf-8")
            for k, o in enumerate(c.sim.outcomes, 1):
                (traces / f"scenario.{c.name}.{k}.itf.json").write_text(
                    json.dumps(trace_itf(o.trace), indent=2) + "\n", encoding="utf-8")
    return out


def _json(results: list[CheckResult], model: Model, command: str, cases: list[CaseResult] | None) -> dict[str, Any]:
    data = results_json(results, command, display_path(model.root), cases)
    data["warnings"] = [str(w) for w in model.warnings]  # (also printed to standard error)
    if model.edition is not CURRENT:
        data["edition"] = edition_json(model)
    return data


def _n(count: int, noun: str) -> str:
    """'1 rule', '2 rules', '3 properties'."""
    if count == 1:
        return f"1 {noun}"
    return f"{count} {noun[:-1] + 'ies' if noun.endswith('y') else noun + 's'}"


def _library(model: Model) -> str:
    return display_path(Path(model.root) / LIBRARY)


def _run(ids: tuple[str, ...], rules: str | None, engine: str, config: tuple[str, ...], as_json: bool,
         reports: str, no_reports: bool, witness: bool, depth: int, timeout: float, rlimit: int,
         search_rlimit: int, z3_budget: int | None, symmetry: bool | None, players: tuple[int, ...] | None,
         max_memory: int | None, jobs: int | None, cache_dir: str, use_cache: bool, edition: str | None,
         junit: str | None, sarif: str | None, quiet: bool, verbose: bool, explore_first: int,
         scenarios: bool = False) -> int:
    model = _model(rules, edition)
    props = select(model, list(ids))
    # the case library holds today's rulings: an edition is checked on its properties alone
    scenarios = scenarios and model.edition is CURRENT
    options = Options(engine=engine, configs=tuple(config) or None, depth=depth, rlimit=rlimit,
                      search_rlimit=search_rlimit, z3_budget=z3_budget, timeout_ms=max(1, int(timeout * 1000)),
                      symmetry=symmetry, players=players, max_memory_mb=max_memory,
                      jobs=jobs or os.cpu_count() or 1, cache=cache_dir if use_cache else None,
                      explore_first=explore_first)
    with ExitStack() as stack:
        scenarios_played: Callable[[], list[CaseResult]] | None = None

        def case_library() -> None:
            """Read the case library while the games start (a bad file stops them before any
            result is shown) and play it in processes that take only the time the games leave a
            core idle until they are done."""
            nonlocal scenarios_played
            library = load_library(model, library_files(model))
            scenarios_played = stack.enter_context(library_played(
                model, library, memory_mb=max_memory, timeout=timeout,
                cache=CaseCache(cache_dir) if use_cache else None, jobs=options.jobs, idle=True))

        with RunProgress("games", shows_progress(quiet, as_json), f" ({_n(len(props), 'property')})",
                         total=len(games(model, options))) as bar:
            results = check(model, props, options, progress=bar, alongside=case_library if scenarios else None)
        cases = None if scenarios_played is None else scenarios_played()
    where = None if no_reports else write_reports(results, model, reports, cases)
    traces = f"{where / 'traces'}" if where is not None else ""
    if junit is not None:
        Path(junit).write_text(junit_xml(results, model, cases), encoding="utf-8")
    if sarif is not None:
        Path(sarif).write_text(json.dumps(sarif_log(results, model, _command()), indent=2) + "\n", encoding="utf-8")
    if as_json:
        click.echo(json.dumps(_json(results, model, _command(), cases), separators=(",", ":")))
    elif quiet:
        click.echo(results_text(results, witnesses=witness, max_steps=SHOWN_STEPS, traces_dir=traces, quiet=True))
        failed = [c for c in cases or () if not c.ok]
        if cases is not None:
            click.echo(f"case library: {len(cases) - len(failed)} of {len(cases)} scenarios as their rulings say"
                       + "".join(f"\n  {c.status}: {c.sim.scenario.path}" for c in failed))
    else:
        if model.edition is not CURRENT:
            click.echo(edition_text(model) + "\n")
        click.echo("games (explicit exploration stays within these bounds; Z3 proofs do not):")
        played = games(model, options)
        for c in model.configs:
            counts = [n for name, n in played if name == c.name]
            if counts:
                explored = [n for n in counts if c.explores(n)] if options.engine != "z3" else counts
                rest = "the rest by Z3 only" if options.engine == "both" else "the rest not checked (--engine explicit)"
                only = ("" if explored == counts else
                        f" (explored: {'/'.join(map(str, explored)) or 'none'}; {rest})")
                line = f"  {c.name:<14} {'/'.join(map(str, counts))} players{only}; {c.describe_bounds()}"
                click.echo(line if verbose else cut_line(line))
        click.echo("")
        click.echo(results_text(results, witnesses=witness, max_steps=SHOWN_STEPS, traces_dir=traces,
                                verbose=verbose))
        if options.cache is not None:
            click.echo(cache_text(results, options.cache, cases))
        if cases is not None:
            click.echo("\n" + cases_text(cases, _library(model), max_steps=SHOWN_STEPS, traces_dir=traces))
        if where is not None:
            click.echo(f"reports: {where / 'latest.md'}, {where / 'latest.json'}")
    return EXIT_OK if all(r.ok for r in results) and all(c.ok for c in cases or ()) else EXIT_FAIL


def _player_counts(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[int, ...] | None:
    """'2..8' -> (2, ..., 8); '3,4' -> (3, 4); '5' -> (5,)."""
    if value is None:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*\.\.\s*(\d+)\s*", value)
    try:
        counts = (tuple(range(int(m.group(1)), int(m.group(2)) + 1)) if m else
                  tuple(sorted({int(x) for x in value.split(",")})))
    except ValueError:
        raise click.BadParameter(f"'{value}' is not a player count, a list such as '3,4' or a range such as '2..8'")
    if not counts or not all(2 <= n <= MAX_PLAYERS for n in counts):
        raise click.BadParameter(f"'{value}': player counts go from 2 to {MAX_PLAYERS}")
    return counts


MAX_MEMORY_OPTION = click.option(
    "--max-memory", type=click.IntRange(64, 1 << 22), default=None, metavar="MIB",
    help="Memory one exploration (a game, or a scenario) may add, in MiB; reaching it gives unknown "
         "and says so.  [default: half the memory available when it starts]")


def _check_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("--rules", type=click.Path(file_okay=False), default=None,
                     help="Model directory to check instead of the bundled one (a copy of model/)."),
        EDITION_OPTION,
        click.option("--engine", type=click.Choice(ENGINES), default="both", show_default=True,
                     help="explicit: exhaustive search within bounds; z3: proofs for all counter values "
                          "and bounded model checking; both: each (see --explore-first)."),
        click.option("--explore-first", type=click.IntRange(1, 10_000_000), default=EXPLORE_FIRST,
                     show_default=True, metavar="STATES",
                     help="With both engines, states explored first in each game: a game whole within them "
                          "is settled there (Z3 asked only what it leaves open); in a larger one Z3 is asked "
                          "first for proofs, and exploration goes on past them only where none is found or a "
                          "witness is still wanted. At a configuration's max_states or more: every game "
                          "explored whole first."),
        click.option("--config", multiple=True, help="Only this configuration (repeatable)."),
        click.option("--json", "as_json", is_flag=True, help="Print the results as JSON."),
        click.option("--reports", default="reports", show_default=True,
                     help="Directory for latest.md, latest.json and traces/."),
        click.option("--no-reports", is_flag=True, help="Write no report files."),
        click.option("--junit", type=click.Path(dir_okay=False), default=None, metavar="FILE",
                     help="Also write the results as JUnit XML: a test case per property and game (violated: "
                          "a failure; unknown: an error; the case library too)."),
        click.option("--sarif", type=click.Path(dir_okay=False), default=None, metavar="FILE",
                     help="Also write the results as SARIF 2.1.0: each property not settled as holding, at "
                          "the model file and line of the rule its trace blames."),
        click.option("--witness", is_flag=True, help="Also print each property's witness trace."),
        QUIET,
        click.option("--verbose", "-v", is_flag=True,
                     help="Each property's line with the rules it protects and the whole method, every game "
                          "named (as in the reports)."),
        click.option("--depth", type=click.IntRange(1, 60), default=DEFAULT_DEPTH, show_default=True,
                     help="Deepest bounded-model-checking search, in steps."),
        click.option("--rlimit", type=click.IntRange(1, MAX_RLIMIT), default=DEFAULT_RLIMIT, show_default=True,
                     help="Z3 budget per property and game, in Z3's resource units: the same verdicts on "
                          "any machine (unknown when spent)."),
        click.option("--search-rlimit", type=click.IntRange(1, MAX_RLIMIT), default=DEFAULT_SEARCH_RLIMIT,
                     show_default=True,
                     help="Z3 budget of one bounded search for a counterexample the explicit engine could "
                          "not see (--engine both), in resource units."),
        click.option("--z3-budget", type=click.IntRange(1, MAX_RLIMIT), default=None,
                     help="Z3 budget for the whole run, in resource units (unknown when spent)."),
        click.option("--timeout", type=click.FloatRange(0.001, 86400), default=DEFAULT_TIMEOUT_MS / 1000,
                     show_default=True,
                     help="Wall-clock safety net per property and game (and per scenario), in seconds: "
                          "reaching it gives unknown, and says the verdict depends on the machine's speed."),
        MAX_MEMORY_OPTION,
        click.option("--players", "players", default=None, metavar="COUNTS", callback=_player_counts,
                     help="Player counts to check in every configuration instead of its own: '2..8', "
                          f"'3,4' or '5' (within 2..{MAX_PLAYERS}). Z3 checks each; explicit exploration only "
                          "the counts a configuration explores."),
        click.option("--jobs", "-j", type=click.IntRange(1, 64), default=None,
                     help="Games explored at once, each in its own process, while Z3 checks the games "
                          "explored before them, and (verify all) the case library's scenarios played "
                          "at once [default: the number of cores]. Every verdict and trace is the same for "
                          "any number."),
        click.option("--cache-dir", default=DEFAULT_CACHE_DIR, show_default=True, envvar="ENDGAME_CACHE_DIR",
                     help="Folder where each game's results are kept between runs, by what the rules mean "
                          "(rewording a rule's text reuses them; changing what it does checks again the "
                          "games where it is live). Also from ENDGAME_CACHE_DIR."),
        click.option("--cache/--no-cache", "use_cache", default=True, show_default=True, envvar="ENDGAME_CACHE",
                     help="Reuse and keep results between runs (--no-cache: neither; also ENDGAME_CACHE=0)."),
        click.option("--symmetry/--no-symmetry", default=None,
                     help="Explore one state per rotation of the seats (where Z3 proves the rules symmetric) "
                          "in every game, or in none; by default, in the games whose configuration says "
                          "symmetry = true. (With both engines, a game's first look, --explore-first, is "
                          "not reduced: only a whole exploration after it.)"),
    ]
    for opt in reversed(options):
        fn = opt(fn)
    return fn


@click.group(epilog=EXIT_CODES, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="verify (Endgame)", message="%(prog)s %(version)s")
def main() -> None:
    """Endgame: a formal verifier for the draw and end-of-game rules of Magic: The Gathering."""
    collect_rarely()


# Python's cycle collector by default looks for garbage every 700 container allocations, and
# walks all of memory every 70,000 more: compiling the rules and exploring allocate millions of
# closures, tuples and dictionaries, almost none of them in cycles. Measured on the bundled model
# (`verify all`, 2 cores): cached 4.2 s -> 3.2 s (one compile of 608.2's update took 96-260 ms
# where a full collection fell into it, against 3-10 ms), cold 23.1 s -> 21.1 s.
GC_THRESHOLDS = (50_000, 20, 100)


def collect_rarely() -> None:
    """Run the cycle collector less often (:data:`GC_THRESHOLDS`): forked processes inherit it."""
    gc.set_threshold(*GC_THRESHOLDS)


@main.command("all", epilog=EXIT_CODES)
@_check_options
@click.option("--no-scenarios", is_flag=True,
              help="Skip the case library (the scenarios in the model's scenarios/ folder).")
@_guard
def all_(no_scenarios: bool, **kw: Any) -> int:
    """Check every property on every configuration of the model, then play every scenario of its
    case library (scenarios/*.toml in the model directory): each must end as its ruling says."""
    return _run((), scenarios=not no_scenarios, **kw)


@main.command("check", epilog=EXIT_CODES)
@click.argument("ids", nargs=-1, required=True)
@_check_options
@_guard
def check_(ids: tuple[str, ...], **kw: Any) -> int:
    """Check the named properties (see `verify list`)."""
    return _run(ids, **kw)


@main.command("init", epilog=EXIT_CODES)
@click.argument("directory", type=click.Path(file_okay=False))
@AS_JSON
@NO_REPORTS
@QUIET
@_guard
def init_(directory: str, as_json: bool, no_reports: bool, quiet: bool) -> int:
    """Write an editable copy of the bundled model into DIRECTORY (new or empty): its rules,
    properties, configurations, editions and case library, to change and check with
    `verify all --rules DIRECTORY`. Needs no clone of Endgame's repository."""
    target = Path(directory)
    if target.exists() and any(target.iterdir()):
        raise UsageError(f"{directory} is not empty: `verify init` writes a new copy of the model")
    source = bundled_model_dir()
    shutil.copytree(source, target, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__", "*.py", "*.pyc"))
    files = sum(1 for p in target.rglob("*") if p.is_file())
    _inapplicable("init", no_reports=(no_reports, "it writes the model's files, no reports"))
    if as_json:
        click.echo(json.dumps({"directory": directory, "files": files}))
    elif not quiet:
        click.echo(f"wrote {files} files of the bundled model to {directory}; check them with "
                   f"`verify all --rules {shlex.quote(directory)}`")
    return EXIT_OK


@main.command("list", epilog=EXIT_CODES)
@click.option("--rules", type=click.Path(file_okay=False), default=None, help="Model directory.")
@EDITION_OPTION
@click.option("--lang", default=None, metavar="CODE",
              help="Show the rules' texts in this language where the edition has them (e.g. fr).")
@click.option("--editions", "list_editions", is_flag=True, help="Name the model's editions instead.")
@AS_JSON
@NO_REPORTS
@QUIET
@_guard
def list_(rules: str | None, edition: str | None, lang: str | None, list_editions: bool, as_json: bool,
          no_reports: bool, quiet: bool) -> int:
    """Show every rule (CR number, kind, one line of text) and every property."""
    _inapplicable("list", no_reports=(no_reports, "it writes no reports"),
                  quiet=(quiet, "it checks nothing, so nothing fails; it prints what was asked"))
    model = _model(rules, edition)
    if list_editions:
        names = edition_names(model.root)
        titles = {n: (load_model(model.root, n).edition.title if n != CURRENT.name else CURRENT.title) for n in names}
        if as_json:
            click.echo(json.dumps([{"name": n, "title": titles[n]} for n in names], indent=2))
        else:
            for n in names:
                click.echo(f"  {n:<10} {titles[n]}")
        return EXIT_OK
    if lang is not None and not any(lang == code for r in model.rules for code, _ in r.texts):
        click.echo(f"note: no rule of edition {model.edition.name} has a text in '{lang}': the texts are "
                   "shown in English", err=True)
    if as_json:
        click.echo(json.dumps({
            "edition": model.edition.name,
            "rules": [{"id": r.id, "cites": list(r.cites), "kind": r.kind, "defines": r.defines,
                       "text": r.text_in(lang), "file": r.loc.file, "line": r.loc.line} for r in model.rules],
            "properties": [{"id": p.id, "title": p.title, "protects": list(p.protects), "kind": p.kind}
                           for p in model.properties],
            "configs": [{"name": c.name, "players": list(c.players)} for c in model.configs]}, indent=2))
        return EXIT_OK
    if model.edition is not CURRENT:
        click.echo(edition_text(model) + "\n")
    click.echo(f"rules ({len(model.rules)}):")
    def shown(rows: list[tuple[str, ...]]) -> None:
        for line in aligned(rows, gap=1):
            click.echo(cut_line("  " + line))
    shown([(r.id, f"{r.kind} of {r.defines}" if r.defines else r.kind, r.summary(lang, width=200))
           for r in model.rules])
    click.echo(f"\nproperties ({len(model.properties)}):")
    shown([(p.id, p.kind, f"[{', '.join(p.protects)}] {p.title}") for p in model.properties])
    click.echo(f"\nconfigurations ({len(model.configs)}):")
    shown([(c.name, f"players {', '.join(map(str, c.players))}; {c.describe_bounds()}") for c in model.configs])
    return EXIT_OK


@main.command("explore", epilog=EXIT_CODES)
@click.option("--rules", type=click.Path(file_okay=False), default=None, help="Model directory.")
@EDITION_OPTION
@click.option("--config", multiple=True, help="Only this configuration (repeatable).")
@click.option("--dot", type=click.Path(dir_okay=False), default=None,
              help="Write the state graph of the first game as Graphviz DOT (small graphs only).")
@click.option("--symmetry", is_flag=True,
              help="One state per rotation of the seats, where Z3 proves the rules symmetric.")
@AS_JSON
@NO_REPORTS
@QUIET
@_guard
def explore_(rules: str | None, edition: str | None, config: tuple[str, ...], dot: str | None, symmetry: bool,
             as_json: bool, no_reports: bool, quiet: bool) -> int:
    """Count the reachable states of each configuration and player count.

    Also counts the strongly connected components that contain a cycle (plays
    that can repeat), found by networkx on the explored graph. With --symmetry
    the counts are of rotation classes, where the seats are proved symmetric.
    """
    _inapplicable("explore", no_reports=(no_reports, "it writes no reports (--dot FILE writes its one file)"))
    model = _model(rules, edition)
    names = [c.name for c in model.configs]
    if not as_json and not quiet:
        click.echo(f"{'config':<14} {'players':>7} {'states':>10} {'steps':>10} {'terminal':>9} {'cut':>6} "
                   f"{'cyclic SCCs':>12}  complete")
    first = True
    rows: list[dict[str, Any]] = []
    for name, n in games(model, Options(configs=tuple(config) or None)):
        if not model.configs[names.index(name)].explores(n):
            continue
        g = explore_game(model, model.configs[names.index(name)], n, symmetry=symmetry)
        if g.symmetry is not None and not g.symmetry.proved:
            click.echo(f"{name} ({n} players): {g.symmetry.describe()}", err=True)
        cyclic = sum(1 for _ in cyclic_components(g))
        row = {"config": name, "players": n, "states": len(g.states), "steps": len(g.src),
               "terminal": len(g.terminal()), "cut": sum(1 for c in g.cut if c), "cyclic_sccs": cyclic,
               "complete": g.complete}
        rows.append(row)
        if not as_json and (not quiet or not g.complete):  # --quiet: only a search a limit stopped
            click.echo(f"{name:<14} {n:>7} {row['states']:>10,} {row['steps']:>10,} {row['terminal']:>9,} "
                       f"{row['cut']:>6,} {cyclic:>12,}  {'yes' if g.complete else 'no (state limit)'}")
        if dot and first:
            Path(dot).write_text(graph_dot(g), encoding="utf-8")
            if not as_json and not quiet:
                click.echo(f"graph of {name} ({n} players) written to {dot}")
        first = False
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    elif quiet:
        click.echo(f"{len(rows)} games explored, {sum(r['states'] for r in rows):,} states; "
                   f"{sum(1 for r in rows if not r['complete'])} stopped by a limit")
    return EXIT_OK


DIFF_EXIT = """\b
Exit status:
  0  A and B reach the same results from every situation of every game compared
  1  they differ (each difference shown as a game under A and under B), or an exploration
     stopped at a limit, so that agreement is not settled
  2  bad input: a model or edition file (file:line:col), an unknown edition, or an option
  3  an internal error in Endgame (please report it, with the traceback)"""


def _side(spec: str, rules: str | None) -> tuple[Model, str]:
    """A rule set named on the command line: a model folder, or an edition of --rules (the
    bundled model by default), e.g. '2009' or 'current'."""
    path = Path(spec)
    if path.is_dir():
        model = _model(spec)
        return model, f"the rules in {spec}"
    model = _model(rules, spec)
    return model, f"edition {model.edition.name} ({model.edition.title})"


@main.command("diff", epilog=DIFF_EXIT)
@click.argument("a")
@click.argument("b")
@click.option("--rules", type=click.Path(file_okay=False), default=None,
              help="The model whose editions A and B name (default: the bundled one).")
@click.option("--config", multiple=True, help="Only this configuration (repeatable).")
@click.option("--players", "players", default=None, metavar="COUNTS", callback=_player_counts,
              help="Only these player counts ('3', '2..4'), among those each configuration explores.")
@click.option("--scenario", type=click.Path(dir_okay=False), default=None,
              help="Only this situation: a scenario file, played under A and under B.")
@click.option("--engine", type=click.Choice(ENGINES), default="both", show_default=True,
              help="explicit: explore both on the counts a configuration explores; z3: ask Z3, for all counter "
                   "values, on every count; both: each.")
@click.option("--depth", type=click.IntRange(1, 60), default=DEFAULT_PRODUCT_DEPTH, show_default=True,
              help="Longest play Z3 searches before a parting step, in steps.")
@click.option("--rlimit", type=click.IntRange(1, MAX_RLIMIT), default=DEFAULT_PRODUCT_RLIMIT, show_default=True,
              help="Z3 budget per game, in Z3's resource units (not settled when spent).")
@click.option("--json", "as_json", is_flag=True, help="Print the diff as JSON.")
@click.option("--reports", default="reports", show_default=True, help="Directory for diff.md and diff.json.")
@click.option("--no-reports", is_flag=True, help="Write no report files.")
@QUIET
@_guard
def diff_(a: str, b: str, rules: str | None, config: tuple[str, ...], players: tuple[int, ...] | None,
          scenario: str | None, engine: str, depth: int, rlimit: int, as_json: bool, reports: str,
          no_reports: bool, quiet: bool) -> int:
    """What changes between two rule sets, shown as games. A and B are editions of the model
    (`verify list --editions`: current, 2009, ...) or model folders (a designer's copy of model/).
    Every configuration and player count both explore is explored under each; every situation
    (initial state) from which the results play can reach differ is reported, grouped by the
    rule on the step where the games under A and B part, with both games side by side."""
    ma, name_a = _side(a, rules)
    mb, name_b = _side(b, rules)
    if scenario is not None:
        result = diff_scenario(ma, mb, name_a, name_b, scenario)
    else:
        result = diff_models(ma, mb, name_a, name_b, tuple(config) or None, players, engine=engine, depth=depth,
                             rlimit=rlimit)
    command = _command()
    if not no_reports:
        out = Path(reports)
        out.mkdir(parents=True, exist_ok=True)
        (out / "diff.md").write_text(diff_markdown(result, command), encoding="utf-8")
        (out / "diff.json").write_text(json.dumps(diff_json(result, command), indent=2) + "\n", encoding="utf-8")
    if as_json:
        click.echo(json.dumps(diff_json(result, command), indent=2))
    else:
        click.echo(diff_text(result, quiet=quiet))
        if not no_reports and not quiet:
            click.echo(f"reports: {Path(reports) / 'diff.md'}, {Path(reports) / 'diff.json'}")
    return EXIT_OK if result.agree and result.settled else EXIT_FAIL


SIMULATE_EXIT = """\b
Exit status:
  0  every scenario played out: its outcomes are the expected ones (or it states none)
  1  a scenario has other outcomes than it expects, or one is unknown (a bound was reached)
  2  bad input: a scenario or model file (file:line:col), or an option
  3  an internal error in Endgame (please report it, with the traceback)"""


@main.command("simulate", epilog=SIMULATE_EXIT)
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--rules", type=click.Path(file_okay=False), default=None,
              help="Model directory to play the scenarios with instead of the bundled one.")
@EDITION_OPTION
@click.option("--dot", type=click.Path(dir_okay=False), default=None,
              help="Write the explored situation as Graphviz DOT, outcomes marked (one scenario only).")
@click.option("--json", "as_json", is_flag=True, help="Print the outcomes and their traces as JSON.")
@click.option("--timeout", type=click.FloatRange(0.001, 86400), default=DEFAULT_TIMEOUT_MS / 1000,
              show_default=True, help="Wall-clock limit per scenario, in seconds: reaching it gives unknown.")
@MAX_MEMORY_OPTION
@click.option("--reports", default="reports", show_default=True,
              help=f"Directory whose traces/ receives every trace longer than the {SHOWN_STEPS} steps "
                   "a terminal shows.")
@click.option("--no-reports", is_flag=True, help="Write no report files.")
@QUIET
@_guard
def simulate_(files: tuple[str, ...], rules: str | None, edition: str | None, dot: str | None, as_json: bool, timeout: float,
              max_memory: int | None, reports: str, no_reports: bool, quiet: bool) -> int:
    """Play scenario FILES (model/scenarios/*.toml) through the rules; print every outcome and its trace."""
    if dot and len(files) != 1:
        raise UsageError("--dot writes the graph of one scenario; give exactly one file")
    model = _model(rules, edition)
    scenarios = [load_scenario(f, model) for f in files]  # every file is checked before anything is played
    code = EXIT_OK
    out = []
    shown = 0
    failed = 0
    with RunProgress("scenarios", shows_progress(quiet, as_json) and len(scenarios) > 1, total=len(scenarios)) as bar:
        for k, scenario in enumerate(scenarios, 1):
            sim = simulate(model, scenario, memory_mb=max_memory, timeout=timeout)
            bar(k, len(scenarios), Path(scenario.path).stem, sim.states)
            ok = sim.settled and sim.as_expected is not False
            failed += not ok
            if as_json:
                out.append(scenario_json(sim))
            elif not (quiet and ok):  # --quiet: only the scenarios that do not end as they expect
                where = ""
                if too_long(sim):  # the terminal shows the ends of the trace; the whole of it goes to a file
                    if no_reports:
                        where = "no file (--no-reports)"
                    else:
                        path = Path(reports) / "traces" / f"scenario.{Path(scenario.path).stem}.txt"
                        path.parent.mkdir(parents=True, exist_ok=True)
                        path.write_text(scenario_text(sim) + "\n", encoding="utf-8")
                        where = str(path)
                click.echo(("\n" if shown else "") + scenario_text(sim, SHOWN_STEPS, where))
                shown += 1
            if dot:
                Path(dot).write_text(scenario_dot(sim), encoding="utf-8")
                if not as_json and not quiet:
                    click.echo(f"graph written to {dot} ({sim.graph.number_of_nodes()} states)")
            if not ok:
                code = EXIT_FAIL
    if as_json:
        click.echo(json.dumps(out if len(out) != 1 else out[0], indent=2))
    elif quiet:
        click.echo(("\n" if shown else "") + f"{len(scenarios) - failed} of {len(scenarios)} scenarios end as they expect")
    return code


MUTATE_EXIT = """\b
Exit status:
  0  every mutant is caught, or explained in the model's mutants.toml
  1  a mutant survives unexplained, breaks the checker, or the model itself fails a check
  2  bad input: a model, scenario or mutants.toml file (file:line:col), or an option
  3  an internal error in Endgame (please report it, with the traceback)"""


@main.command("mutate", epilog=MUTATE_EXIT)
@click.option("--rules", type=click.Path(file_okay=False), default=None,
              help="Model directory to mutate instead of the bundled one.")
@click.option("--rule", "rule_ids", multiple=True, help="Only mutants of this rule (repeatable).")
@click.option("--operator", "ops", multiple=True, type=click.Choice(OPERATORS),
              help="Only mutants made by this operator (repeatable).")
@click.option("--mutant", "keys", multiple=True, metavar="KEY",
              help="Only this mutant, by the key the report shows, e.g. '104.4a when drop-conjunct #2' (repeatable).")
@click.option("--config", multiple=True, help="Check the properties on this configuration only (repeatable).")
@click.option("--no-scenarios", is_flag=True, help="Leave the case library out of the checks.")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=None,
              help="Mutants checked at once, in separate processes (default: one per core).")
@click.option("--reports", default="reports", show_default=True, help="Directory for mutants.md and mutants.json.")
@click.option("--no-reports", is_flag=True, help="Write no report files.")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@QUIET
@_guard
def mutate_(rules: str | None, rule_ids: tuple[str, ...], ops: tuple[str, ...], keys: tuple[str, ...],
            config: tuple[str, ...], no_scenarios: bool, jobs: int | None, reports: str, no_reports: bool,
            as_json: bool, quiet: bool) -> int:
    """Make small wrong edits of the rules (mutants) and check each one with the properties and the
    case library: the score is the share of mutants some check catches; every survivor is shown
    with its edit, and must be explained in the model's mutants.toml."""
    _inapplicable("mutate", quiet=(quiet, "its output is already the score and every survivor"))
    model = _model(rules)
    known = {r.id for r in model.rules}
    for rid in rule_ids:
        if rid not in known:
            raise UsageError(f"unknown rule '{rid}'{suggest(rid, sorted(known))}")
    names = {c.name for c in model.configs}
    for name in config:
        if name not in names:
            raise UsageError(f"unknown configuration '{name}'{suggest(name, sorted(names))}")
    explained = load_explanations(model)
    scenarios = [] if no_scenarios else load_library(model, library_files(model))
    ms = mutants(model, frozenset(rule_ids) or None, frozenset(ops) or None)
    if keys:
        made = {m.key for m in ms}
        for key in keys:
            if key not in made:
                raise UsageError(f"no mutant '{key}' among those chosen{suggest(key, sorted(made))}")
        ms = [m for m in ms if m.key in keys]
    if not ms:
        raise UsageError("no mutant: the rules and operators chosen give none")
    # the unmutated model must pass every check the mutants are judged by
    failing = [c for c in play_library(model, scenarios) if not c.ok]
    if failing:
        click.echo(cases_text(failing, _library(model)), err=True)
        click.echo("the model itself fails these scenarios: mend it (or them) before measuring mutants", err=True)
        return EXIT_FAIL
    base = baseline(model, config or None)
    workers = jobs or os.cpu_count() or 1
    if not as_json:
        click.echo(f"{_n(len(ms), 'mutant')} of {_n(len({m.rule for m in ms}), 'rule')}; checks: "
                   f"{_n(len(scenarios), 'scenario')}, then {_n(len(model.properties), 'property')} on "
                   f"{_n(len(base.configs), 'configuration')} (explicit exploration), {workers} at a time")

    def tick(o: Outcome) -> None:
        if not as_json:
            click.echo({"killed": ".", "survived": "S", "error": "E"}[o.status], nl=False)
    outcomes = run_mutants(model, ms, base, scenarios, workers, tick)
    report = MutationReport(tuple(outcomes), explained)
    if not no_reports:
        out = Path(reports)
        out.mkdir(parents=True, exist_ok=True)
        (out / "mutants.md").write_text(mutation_markdown(report, _command()), encoding="utf-8")
        (out / "mutants.json").write_text(json.dumps(mutation_json(report, _command()), indent=2) + "\n",
                                          encoding="utf-8")
    if as_json:
        click.echo(json.dumps(mutation_json(report, _command()), indent=2))
    else:
        click.echo("\n\n" + mutation_text(report))
        if not no_reports:
            click.echo(f"reports: {Path(reports) / 'mutants.md'}, {Path(reports) / 'mutants.json'}")
    return EXIT_OK if report.ok else EXIT_FAIL


def run() -> None:
    """The installed ``verify`` command: :func:`main`, then out of the process as soon as its
    output is flushed. Python's own way out frees every object one by one first (the compiled
    rules, the traces and scenarios, Z3's terms): 0.2-0.4 s of a cached ``verify all`` of about 3 s.
    Nothing waits on it: every command writes and closes its files, and stops and joins its pools
    of processes, before it returns."""
    try:
        main()
        code: object = EXIT_OK
    except SystemExit as done:  # (click's way out, always)
        code = done.code
    if code is None:
        code = EXIT_OK
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = EXIT_FAIL
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):  # the reader went away, or the stream is closed
            pass
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    run()
