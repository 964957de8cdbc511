"""Random scenario files, whole or damaged: `verify simulate` answers every one of them with an
outcome (exit 0 or 1) or a located error (exit 2), never a traceback; every outcome it prints has
a trace that replays."""
from __future__ import annotations

import tempfile
from pathlib import Path

from click.testing import CliRunner
from conftest import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify.cli import main
from verify.model.loader import load_model
from verify.scenarios.format import EVENT_KINDS, load_scenario
from verify.scenarios.simulate import simulate

MODEL = load_model(ROOT / "model")
NAMES = ["Alice", "Bob", "Carol", "Dan"]
EFFECTS = list(MODEL.vocab.enums["effect"])
TRIGGERS = list(MODEL.vocab.enums["event"])
STATICS = list(MODEL.vocab.enums["static"])


@st.composite
def scenarios(draw: st.DrawFn) -> str:
    n = draw(st.integers(2, 4))
    lines = ['[scenario]', 'title = "fuzz"', 'source = "CR 104"']
    for p in range(n):
        lines += ["[[player]]", f'name = "{NAMES[p]}"', f"life = {draw(st.integers(-2, 4))}",
                  f"library = {draw(st.integers(0, 3))}", f"poison = {draw(st.integers(0, 11))}"]
        for flag in ("cant_lose", "cant_win", "cant_draw", "empty_draw_wins"):
            if draw(st.booleans()) and draw(st.booleans()):
                lines.append(f"{flag} = true")
    cards = [f"C{i}" for i in range(draw(st.integers(0, 3)))]
    for c in cards:
        lines += ["[[card]]", f'name = "{c}"', f'controller = "{NAMES[draw(st.integers(0, n - 1))]}"',
                  f'owner = "{NAMES[draw(st.integers(0, n - 1))]}"',
                  f'trigger = "{draw(st.sampled_from(TRIGGERS))}"', f'watches = "{draw(st.sampled_from(cards))}"',
                  f'watched = "{NAMES[draw(st.integers(0, n - 1))]}"', f'effect = "{draw(st.sampled_from(EFFECTS))}"',
                  f"amount = {draw(st.integers(0, 2))}", f'target = "{NAMES[draw(st.integers(0, n - 1))]}"',
                  f'static = "{draw(st.sampled_from(STATICS))}"', f"may = {str(draw(st.booleans())).lower()}",
                  f"activated = {str(draw(st.booleans())).lower()}", f'object = "{draw(st.sampled_from(cards))}"']
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(sorted(k for k in EVENT_KINDS
                                           if cards or (EVENT_KINDS[k].value != "card" and not EVENT_KINDS[k].source))))
        spec = EVENT_KINDS[kind]
        who = NAMES[draw(st.integers(0, n - 1))]
        lines.append("[[event]]")
        if spec.source:  # the card the event's rule is fired for (commander = "C0")
            lines.append(f'{spec.source} = "{draw(st.sampled_from(cards))}"')
        if spec.value == "count":
            lines.append(f"{kind} = {draw(st.integers(0, 3))}")
            lines.append("each = true" if spec.each and draw(st.booleans()) else f'player = "{who}"')
        elif spec.value == "times":
            lines.append(f"{kind} = {draw(st.integers(1, 3))}")
        elif spec.value == "player":
            lines.append(f'{kind} = "{who}"')
        elif spec.value == "card":
            lines.append(f'{kind} = "{draw(st.sampled_from(cards))}"')
        else:
            lines.append(f"{kind} = true")
    return "\n".join(lines) + "\n"


def _damage(text: str, data: st.DataObject) -> str:
    lines = text.splitlines()
    i = data.draw(st.integers(0, len(lines) - 1))
    how = data.draw(st.sampled_from(["drop", "swap", "junk", "dup"]))
    if how == "drop":
        del lines[i]
    elif how == "swap":
        lines[i] = lines[i].replace("=", "= [", 1) if "=" in lines[i] else lines[i] + " = 1"
    elif how == "junk":
        lines[i] = data.draw(st.sampled_from(['life = "x"', "amount = -5", 'controller = "Zed"', "[[oops]]",
                                              "draw = 1.5", 'static = "sometimes"', "each = 3", "x = {"]))
    else:
        lines.insert(i, lines[i])
    return "\n".join(lines) + "\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=scenarios(), data=st.data())
def test_every_scenario_file_gets_an_outcome_or_a_located_error(tmp_path: Path, text: str, data: st.DataObject) -> None:
    if data.draw(st.booleans()):
        text = _damage(text, data)
    path = tmp_path / "s.toml"
    path.write_text(text, encoding="utf-8")
    run = CliRunner().invoke(main, ["simulate", str(path)])
    assert run.exit_code in (0, 1, 2), run.output
    if run.exit_code == 2:
        assert "s.toml:" in run.output and "Traceback" not in run.output
    else:
        assert "outcome 1 of" in run.output


@settings(max_examples=25, deadline=None)
@given(text=scenarios())
def test_whole_scenarios_end_somewhere_with_replayed_traces(text: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.toml"
        path.write_text(text, encoding="utf-8")
        sim = simulate(MODEL, load_scenario(path, MODEL))  # simulate replays every outcome's trace
    assert sim.outcomes
    for o in sim.outcomes:
        assert o.trace.initial == sim.initial and o.label
