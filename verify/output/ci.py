"""Reports for CI systems: JUnit XML (one test case per property and game) and SARIF 2.1.0 (each
property that is not settled as holding, located at the rule its trace blames, so that code review
shows it on the changed line)."""
from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from typing import Any, Iterable

from verify.checking.trace import Trace
from verify.checking.verdict import CheckResult, EngineResult, Verdict
from verify.model.types import Model
from verify.output.text import trace_text
from verify.scenarios.library import CaseResult
from verify.version import __version__

__all__ = ["junit_xml", "sarif_log", "SARIF_SCHEMA"]

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


# -- JUnit ---------------------------------------------------------------------------------
def _game_outcome(results: list[EngineResult]) -> tuple[str, str, str] | None:
    """What one game's engine results make of a test case: None (it passes), or the element
    ('failure', 'error' or 'skipped'), its type and its message."""
    verdicts = [e.verdict for e in results]
    if Verdict.VIOLATED in verdicts:
        e = next(e for e in results if e.verdict is Verdict.VIOLATED)
        return "failure", "violated", f"{e.engine}: {e.method}"
    if Verdict.HOLDS in verdicts or Verdict.VACUOUS in verdicts:
        return None  # settled here (a premise no state of this game meets is the property's concern)
    if Verdict.BOUNDED in verdicts:
        e = next(e for e in results if e.verdict is Verdict.BOUNDED)
        return "skipped", "holds within bounds", f"{e.engine}: {e.method}"
    return "error", "unknown", "; ".join(f"{e.engine}: {e.method}" for e in results)


def _suite(parent: ET.Element, index: int, name: str, stamp: str) -> ET.Element:
    suite = ET.SubElement(parent, "testsuite", {"package": "endgame", "id": str(index), "name": name,
                                                "timestamp": stamp, "hostname": "localhost"})
    ET.SubElement(suite, "properties")
    return suite


def _case(suite: ET.Element, classname: str, name: str, seconds: float,
          outcome: tuple[str, str, str] | None, text: str = "") -> None:
    case = ET.SubElement(suite, "testcase", {"name": name, "classname": classname, "time": f"{seconds:.3f}"})
    if outcome is not None:
        tag, kind, message = outcome
        el = ET.SubElement(case, tag, {"type": kind, "message": message} if tag != "skipped" else {"message": message})
        el.text = text or None


def _close(suite: ET.Element) -> None:
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
    suite.set("errors", str(sum(1 for c in cases if c.find("error") is not None)))
    suite.set("skipped", str(sum(1 for c in cases if c.find("skipped") is not None)))
    suite.set("time", f"{sum(float(c.get('time', '0')) for c in cases):.3f}")
    ET.SubElement(suite, "system-out")
    ET.SubElement(suite, "system-err")


def junit_xml(results: Iterable[CheckResult], model: Model, cases: Iterable[CaseResult] | None = None) -> str:
    """The run as JUnit XML: a test suite per property, a test case per game (configuration and
    player count). A game where a counterexample was found fails (type 'violated', the trace as
    its text); one no engine settled is an error (type 'unknown', with the reason); one settled
    only within bounds is skipped. A property whose verdict is not a pass for reasons no single
    game shows (vacuous: no game reaches its premise; holds only within bounds nobody declared)
    has one more case, 'all games', that fails with that type. Properties that do not apply to
    the model's edition are skipped; the case library is one more suite, a case per scenario."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    root = ET.Element("testsuites")
    index = 0
    for r in results:
        suite = _suite(root, index, r.property_id, stamp)
        index += 1
        props = suite.find("properties")
        assert props is not None
        for name, value in (("title", r.title), ("protects", ", ".join(r.protects)), ("verdict", r.verdict.value),
                            ("method", r.method)):
            ET.SubElement(props, "property", {"name": name, "value": value})
        by_game: dict[tuple[str, int], list[EngineResult]] = defaultdict(list)
        for e in r.results:
            by_game[(e.config, e.players)].append(e)
        classname = f"endgame.{r.property_id}"
        for (config, n), found in by_game.items():
            outcome = _game_outcome(found)
            trace = next((e.trace for e in found if e.verdict is Verdict.VIOLATED and e.trace is not None), None)
            _case(suite, classname, f"{config} ({n}p)", sum(e.seconds for e in found), outcome,
                  trace_text(trace) if trace is not None else "")
        if r.verdict is Verdict.VACUOUS or (r.verdict is Verdict.BOUNDED and not r.declared):
            _case(suite, classname, "all games", 0.0, ("failure", r.verdict.value, r.method))
        _close(suite)
    skipped = model.edition.not_applicable
    if skipped:
        suite = _suite(root, index, f"not applicable to edition {model.edition.name}", stamp)
        index += 1
        for pid, why in skipped.items():
            _case(suite, f"endgame.{pid}", "all games", 0.0, ("skipped", "not applicable", why))
        _close(suite)
    if cases is not None:
        suite = _suite(root, index, "case library", stamp)
        for c in cases:
            outcome = None if c.ok else (("error", "unknown", c.status) if c.status == "unknown"
                                         else ("failure", c.status, f"expected: {', '.join(c.scenario.expect or ())}"))
            text = "" if c.ok else "\n\n".join(trace_text(o.trace) for o in c.sim.outcomes)
            _case(suite, "endgame.scenarios", c.sim.scenario.path, 0.0, outcome, text)
        _close(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


# -- SARIF ---------------------------------------------------------------------------------
def _location(file: str, line: int | None, column: int | None, message: str | None = None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": file.replace("\\", "/")}}
    if line:
        physical["region"] = {"startLine": line, **({"startColumn": column} if column else {})}
    out: dict[str, Any] = {"physicalLocation": physical}
    if message:
        out["message"] = {"text": message}
    return out


def _rule_at(model: Model, number: str) -> tuple[str, Any] | None:
    """The model's rule with this id, else the first with this CR number, and its location."""
    for r in model.rules:
        if r.id == number:
            return r.id, r.loc
    for r in model.rules:
        if r.cr == number:
            return r.id, r.loc
    return None


def _last_step_rule(model: Model, trace: Trace) -> tuple[str, Any] | None:
    """The rule of the trace's last step (the step that breaks the property, or enters the state
    that does) and its location."""
    for step in reversed(trace.steps):
        for rule_id in step.rule.split("+"):
            found = _rule_at(model, rule_id)
            if found is not None:
                return found
    return None


def _blamed(model: Model, protects: tuple[str, ...], trace: Trace) -> tuple[str, Any] | None:
    """The rule a counterexample blames: the first rule the property protects that the model
    has (what its trace shows broken), else the rule of its last step."""
    for number in protects:
        found = _rule_at(model, number)
        if found is not None:
            return found
    return _last_step_rule(model, trace)


def sarif_log(results: Iterable[CheckResult], model: Model, command: str) -> dict[str, Any]:
    """The run as a SARIF 2.1.0 log: a reporting rule per property; a result per property that
    is not settled as holding. Violated: level 'error', located at the model file and line of
    the rule the counterexample blames (the first rule the property protects, else its last
    step's), the property's definition and the last step's rule as related locations, and the
    counterexample as a code flow (a location per step, at the rule that fired). Unknown,
    vacuous or holding only within bounds nobody declared: level 'warning', at the property."""
    results = list(results)
    rules = [{"id": r.property_id, "name": r.property_id, "shortDescription": {"text": r.title},
              "fullDescription": {"text": f"{r.title} (protects {', '.join(r.protects)})"},
              "properties": {"protects": list(r.protects)}} for r in results]
    out: list[dict[str, Any]] = []
    for i, r in enumerate(results):
        if r.ok:
            continue
        prop = model.property(r.property_id)
        at_prop = _location(prop.loc.file, prop.loc.line, prop.loc.col, f"property {prop.id}")
        entry: dict[str, Any] = {"ruleId": r.property_id, "ruleIndex": i,
                                 "properties": {"verdict": r.verdict.value, "method": r.method}}
        trace = r.trace
        blamed = _blamed(model, r.protects, trace) if trace is not None and r.verdict is Verdict.VIOLATED else None
        last = _last_step_rule(model, trace) if trace is not None else None
        if r.verdict is Verdict.VIOLATED:
            entry["level"] = "error"
            where = f" at rule {blamed[0]}" if blamed else ""
            entry["message"] = {"text": f"{r.title}: violated{where} ({r.method})"}
            if blamed is not None:
                loc = blamed[1]
                entry["locations"] = [_location(loc.file, loc.line, loc.col, f"rule {blamed[0]}")]
                related = [at_prop]
                if last is not None and last[0] != blamed[0]:
                    related.append(_location(last[1].file, last[1].line, last[1].col,
                                             f"rule {last[0]}, the counterexample's last step"))
                entry["relatedLocations"] = [{"id": k, **loc} for k, loc in enumerate(related, 1)]
            else:
                entry["locations"] = [at_prop]
            if trace is not None:
                steps = []
                for k, step in enumerate(trace.steps, 1):
                    try:
                        loc = model.rule(step.rule.split("+")[0]).loc
                    except KeyError:
                        loc = prop.loc
                    steps.append({"location": _location(loc.file, loc.line, loc.col,
                                                        f"step {k}: [{step.rule}] {step.mandatoriness}"),
                                  "executionOrder": k})
                if steps:
                    entry["codeFlows"] = [{"message": {"text": trace.message},
                                           "threadFlows": [{"locations": steps}]}]
        else:
            entry["level"] = "warning"
            entry["message"] = {"text": f"{r.title}: {r.verdict.value} ({r.method})"}
            entry["locations"] = [at_prop]
        out.append(entry)
    return {"version": "2.1.0", "$schema": SARIF_SCHEMA,
            "runs": [{"tool": {"driver": {"name": "Endgame", "version": __version__, "rules": rules}},
                      "invocations": [{"executionSuccessful": True, "commandLine": command}],
                      "results": out}]}
