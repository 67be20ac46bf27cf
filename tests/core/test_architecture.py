"""ARCHITECTURE.md's layers hold: imports point down (entry points -> features -> core), and the only crossings and
module circles are the ones evals/import_graph.py lists with their reasons. A new one fails here until it is
either removed or listed there with why (and, between features, described in ARCHITECTURE.md)."""

from __future__ import annotations

import functools
import shutil
from pathlib import Path
from typing import Literal

import pytest

from evals import import_graph
from evals.import_graph import ALLOWED_CIRCLES, ALLOWED_CROSSINGS, LAYERS
from tests.conftest import REPO

TEMPERA = REPO / "tempera"
ARCHITECTURE = REPO / "ARCHITECTURE.md"
FEATURES = {package for package, layer in LAYERS.items() if layer == LAYERS["inject"]}


def _imports(root: Path) -> list[import_graph.Import]:
    """The checkout's imports are read once for all the tests here; a changed copy's, each time."""
    return _today() if root == TEMPERA else import_graph.imports(root)


@functools.cache
def _today() -> list[import_graph.Import]:
    return import_graph.imports(TEMPERA)


def _new_crossings(root: Path) -> list[str]:
    return [
        f"{pair} ({imports[0].source} line {imports[0].line})"
        for pair, imports in import_graph.crossings(_imports(root)).items()
        if import_graph.allowed_crossing(pair) is None
    ]


def _new_circles(root: Path, kind: Literal["top", "all"]) -> list[list[str]]:
    found = _imports(root)
    return [
        sorted(circle)
        for circle in import_graph.circles(found, kind)
        if import_graph.allowed_circle(circle, kind) is None
    ]


def _copy(tmp_path: Path) -> Path:
    """A copy of the package, to be changed without touching the checkout."""
    root = tmp_path / "tempera"
    shutil.copytree(TEMPERA, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_every_package_has_a_layer() -> None:
    packages = {d.name for d in TEMPERA.iterdir() if (d / "__init__.py").is_file()}
    assert packages - set(LAYERS) == set(), "place each package in a layer: LAYERS in evals/import_graph.py"


def test_no_new_crossing() -> None:
    assert _new_crossings(TEMPERA) == [], (
        "an import points sideways or up the layers: import it the other way round, or list it in "
        "ALLOWED_CROSSINGS (evals/import_graph.py) with why"
    )


def test_core_imports_nothing_above_it() -> None:
    allowed_from_core = [
        pair for pairs in ALLOWED_CROSSINGS.values() for pair in pairs if pair.startswith("tempera.core")
    ]
    assert allowed_from_core == []


@pytest.mark.parametrize("kind", ["top", "all"])
def test_no_new_circle(kind: Literal["top", "all"]) -> None:
    assert _new_circles(TEMPERA, kind) == [], (
        f"a new or larger module circle ({kind} imports): break it, or list it in ALLOWED_CIRCLES with why"
    )


def test_architecture_names_every_import_between_features() -> None:
    """The section "Layers and arrows" names both ends of each feature -> feature import (it once named two)."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text[text.index("## Layers and arrows") :].split("\n## ", 1)[0]
    unnamed = []
    for pair, (first, *_) in import_graph.crossings(_today()).items():
        if {import_graph.package_of(first.source), import_graph.package_of(first.target)} <= FEATURES:
            source, target = (
                module.removeprefix("tempera.").replace(".", "/") for module in (first.source, first.target)
            )
            if f"`{source}.py`" not in section or not any(f"`{target}{end}" in section for end in (".py`", "/`")):
                unnamed.append(pair)
    assert unnamed == []


def _append(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text((path.read_text(encoding="utf-8") if path.exists() else "") + text, encoding="utf-8")


def test_a_forbidden_import_fails(tmp_path: Path) -> None:
    """The check can fail: core importing a feature, and a feature importing another, are found as new."""
    root = _copy(tmp_path)
    _append(root / "core" / "__init__.py", "\nfrom tempera import inject\n")
    _append(root / "dream" / "__init__.py", "\nfrom tempera import team\n")
    assert [line.split(" (")[0] for line in _new_crossings(root)] == [
        "tempera.core -> tempera.inject",
        "tempera.dream -> tempera.team",
    ]


def test_a_new_circle_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check can fail: a new circle is found, one that grows past its listed modules too, and one that an
    import-time import closes is found among the `top` ones (in a package of a few modules, read as tempera/ is)."""
    root = tmp_path / "tempera"
    for name in ("__init__.py", "core/__init__.py"):
        _append(root / name, "")
    a, b, c = "tempera.core.a", "tempera.core.b", "tempera.core.c"
    _append(root / "core" / "a.py", "from tempera.core import b\n")
    _append(root / "core" / "b.py", "def late():\n    from tempera.core import a\n")
    assert _new_circles(root, "all") == [[a, b]] and _new_circles(root, "top") == []

    monkeypatch.setitem(ALLOWED_CIRCLES, "all", {"kept for this test": frozenset({a, b})})
    assert _new_circles(root, "all") == []
    _append(root / "core" / "c.py", "from tempera.core import a\n")
    _append(root / "core" / "b.py", "def later():\n    from tempera.core import c\n")
    assert _new_circles(root, "all") == [[a, b, c]]

    _append(root / "core" / "b.py", "from tempera.core import a\n")
    assert _new_circles(root, "top") == [[a, b]]
