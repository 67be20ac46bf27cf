"""The brief: file matching by full relative path, cross-project transfer by scope, budget and stable keys."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tempera.core.brief import build_brief, files_named_in, known_files
from tempera.core.memory import Memory
from tempera.core.project import ProjectRef, project_for_path
from tempera.core.selfimprove.asks import ShouldHaveAskedInput, log_should_have_asked
from tempera.core.selfimprove.mistakes import CorrectionInput, log_correction


pytestmark = pytest.mark.usefixtures("one_row_suffices")  # about matching, transfer and budget, not the bar


@pytest.fixture
def projects(tmp_path: Path) -> tuple[ProjectRef, ProjectRef]:
    refs = []
    for name in ("alpha", "beta"):
        (tmp_path / name / ".git").mkdir(parents=True)
        refs.append(project_for_path(tmp_path / name))
    return refs[0], refs[1]


def correct(mem: Memory, project: ProjectRef, category: str, files: list[str], scope: str | None = None) -> None:
    log_correction(
        mem.store,
        CorrectionInput(
            category=category,
            description=f"{category} happened",
            correction=f"that was {category}",
            files=files,
            scope=scope,
            project=project.path,
        ),
    )


def test_matching_is_by_full_relative_path_not_basename(mem: Memory, projects: tuple[ProjectRef, ProjectRef]) -> None:
    alpha, _ = projects
    correct(mem, alpha, "wrong_model_field", ["src/shop/models.py"])
    correct(mem, alpha, "fixture_leak", ["tests/models.py"])
    brief = build_brief(mem, alpha.id, [f"{alpha.path}/src/shop/models.py"])
    assert brief.files == ["src/shop/models.py"]
    assert [c.category for c in brief.categories] == ["wrong_model_field"]
    assert build_brief(mem, alpha.id, ["models.py"]).categories == []


def test_language_scoped_correction_crosses_projects_project_scoped_does_not(
    mem: Memory, projects: tuple[ProjectRef, ProjectRef]
) -> None:
    alpha, beta = projects
    correct(mem, alpha, "mutable_default_argument", ["src/app/util.py"], scope="language:python")
    correct(mem, alpha, "alpha_only_convention", ["src/app/util.py"], scope="project")
    correct(mem, beta, "beta_naming", ["lib/core.py"])
    log_should_have_asked(
        mem.store,
        ShouldHaveAskedInput(
            trigger="python packaging", question="Poetry or uv?", scope="language:python", project=alpha.path
        ),
    )

    plain = build_brief(mem, beta.id, ["lib/core.py"])
    assert [(c.category, c.project) for c in plain.categories] == [("beta_naming", None)]
    crossed = build_brief(mem, beta.id, ["lib/core.py"], cross_project=True)
    assert [(c.category, c.project) for c in crossed.categories] == [
        ("beta_naming", None),
        ("mutable_default_argument", "alpha"),
    ]
    assert [(a.question, a.project) for a in crossed.asks] == [("Poetry or uv?", "alpha")]
    text = crossed.render(4000)
    assert "[from alpha] Correction category mutable_default_argument" in text
    assert "alpha_only_convention" not in text
    # a Python scope says nothing about a Rust file set
    assert build_brief(mem, beta.id, ["src/main.rs"], cross_project=True).categories == []


def test_domain_scope_crosses_for_the_same_domain(mem: Memory, projects: tuple[ProjectRef, ProjectRef]) -> None:
    alpha, beta = projects
    correct(mem, alpha, "host_header_trust", ["src/auth.rs"], scope="domain:auth-middleware")
    assert (
        build_brief(mem, beta.id, ["x.rs"], domain="Auth-Middleware", cross_project=True).categories[0].project
        == "alpha"
    )
    assert build_brief(mem, beta.id, ["x.rs"], domain="billing", cross_project=True).categories == []


def test_counts_budget_and_keys(mem: Memory, projects: tuple[ProjectRef, ProjectRef]) -> None:
    alpha, _ = projects
    for _ in range(3):
        correct(mem, alpha, "validation_skipped", ["src/auth.py"])
    correct(mem, alpha, "host_header_trust", ["src/router.py"])
    brief = build_brief(mem, alpha.id, ["src/auth.py", "src/router.py"])
    assert [(c.category, c.count) for c in brief.categories] == [("validation_skipped", 3), ("host_header_trust", 1)]
    full = brief.render(4000)
    assert full.splitlines()[0].startswith("- Correction category validation_skipped (3x, 3 sessions, last ")
    assert len(brief.render(150)) <= 150 and len(brief.render(150).splitlines()) == 1
    assert brief.render(60).endswith("…") and len(brief.render(60)) <= 60
    first_key = brief.statements()[0].key
    assert "validation_skipped" not in brief.render(4000, exclude={first_key})
    assert brief.statements() == build_brief(mem, alpha.id, ["src/auth.py", "src/router.py"]).statements()
    assert build_brief(mem, alpha.id, ["docs/nothing.md"]).render() == ""


def test_brief_cli_text_and_json(tempera: Callable, mem: Memory, projects: tuple[ProjectRef, ProjectRef]) -> None:
    alpha, beta = projects
    correct(mem, alpha, "mutable_default_argument", ["src/app/util.py"], scope="language:python")
    code, out, _ = tempera("lessons", "brief", "--files", "lib/core.py", "--cross-project", cwd=Path(beta.path))
    assert code == 0 and "[from alpha] Correction category mutable_default_argument" in out
    _, out, _ = tempera("lessons", "brief", "--files", "lib/core.py", cwd=Path(beta.path))
    assert out.strip() == "Nothing to surface for these files yet."
    _, out, _ = tempera("lessons", "brief", "--files", "src/app/util.py", "--json", "--project", alpha.path)
    data = json.loads(out)
    assert data["files"] == ["src/app/util.py"] and data["correction_categories"][0]["count"] == 1
    assert data["statements"][0]["key"].startswith("category:")


def test_files_named_in(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "sub" / "mod.py").write_text("", encoding="utf-8")
    (root / "Cargo.toml").write_text("", encoding="utf-8")
    prompt = f"look at pkg.sub.mod, `Cargo.toml`, {root}/pkg/sub/mod.py, ./missing.py and login.py; e.g. v1.2 is fine"
    assert files_named_in(prompt, str(root)) == ["pkg/sub/mod.py", "Cargo.toml"]
    assert files_named_in(prompt, str(root), known=["app/auth/login.py"]) == [
        "pkg/sub/mod.py",
        "Cargo.toml",
        "app/auth/login.py",
    ]
    assert files_named_in("nothing here", str(root)) == []


def test_known_files_are_per_project(mem: Memory, projects: tuple[ProjectRef, ProjectRef]) -> None:
    alpha, beta = projects
    correct(mem, alpha, "c", ["a.py"])
    log_should_have_asked(
        mem.store, ShouldHaveAskedInput(trigger="t", question="q?", files=["b.py"], project=alpha.path)
    )
    correct(mem, beta, "c", ["z.py"])
    assert sorted(known_files(mem.db, alpha.id)) == ["a.py", "b.py"]
