"""The layout is a checked contract: the pipeline's layers (import-linter, pyproject.toml), no import
cycles between modules, and an explicit engine that runs with Z3 unimportable."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import grimp
import networkx as nx
from conftest import ROOT


def test_the_layers_hold() -> None:
    lint = Path(sys.executable).parent / "lint-imports"
    run = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, text=True, capture_output=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout


def test_a_broken_layer_is_caught(tmp_path: Path) -> None:
    """The contract can fail: a copy of the package whose explicit engine imports the checker."""
    import shutil
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "verify", copy / "verify", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    drift = copy / "verify" / "explicit" / "drift.py"
    drift.write_text(drift.read_text(encoding="utf-8") + "\nfrom verify.checking import runner  # noqa\n",
                     encoding="utf-8")
    lint = Path(sys.executable).parent / "lint-imports"
    run = subprocess.run([str(lint), "--no-cache"], cwd=copy, text=True, capture_output=True, timeout=300,
                         env={"PYTHONPATH": str(copy), "PATH": ""})
    assert run.returncode != 0
    assert "verify.explicit.drift -> verify.checking" in run.stdout


def test_no_import_cycles() -> None:
    graph = grimp.build_graph("verify")  # type-checking imports included: no cycle even there
    imports = nx.DiGraph([(m, i) for m in graph.modules for i in graph.find_modules_directly_imported_by(m)])
    assert imports.number_of_edges() > 50
    assert not list(nx.simple_cycles(imports))


def test_the_explicit_engine_and_scenarios_run_without_z3() -> None:
    script = textwrap.dedent(f"""
        import sys
        sys.modules["z3"] = None  # any import of z3 now raises ImportError
        try:
            import z3  # noqa: F401
        except ImportError:
            pass
        else:
            raise SystemExit("z3 is still importable")
        from verify.checking.properties import check_explicit
        from verify.explicit.explore import explore
        from verify.model.loader import load_model
        from verify.scenarios.format import load_scenario
        from verify.scenarios.simulate import simulate
        m = load_model({str(ROOT / "model")!r})
        g = explore(m, m.configs[0], 2)
        r = check_explicit(g, m.property("all-lose-is-draw"))
        sim = simulate(m, load_scenario({str(ROOT / "model" / "scenarios" / "all-at-one-life.toml")!r}, m))
        print(len(g.states), r.verdict.name, sim.as_expected, "z3" in sys.modules and sys.modules["z3"] is not None)
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, text=True, capture_output=True, timeout=300)
    assert run.returncode == 0, run.stderr
    states, verdict, expected, loaded = run.stdout.split()
    # the duel's bounds are its declared scope: exploration within them is all it can say
    assert int(states) > 100 and verdict == "BOUNDED" and expected == "True" and loaded == "False"


def test_every_folder_of_the_bundled_model_is_installed() -> None:
    """`pip install .` ships model/ as verify/bundled: each of its folders of model files must be
    a package of pyproject.toml with its files as package data (an installed copy without
    editions/ could not compare editions)."""
    import tomllib
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    dirs = {Path(d) for d in setup["package-dir"].values()}
    for folder in [ROOT / "model", *(p for p in (ROOT / "model").iterdir() if p.is_dir())]:
        if not any(folder.glob("*.toml")):
            continue
        rel = folder.relative_to(ROOT)
        assert rel in dirs, f"{rel} is not installed: add it to [tool.setuptools] package-dir and packages"
        package = next(k for k, v in setup["package-dir"].items() if Path(v) == rel)
        assert package in setup["packages"] and "*.toml" in setup["package-data"].get(package, []), package
