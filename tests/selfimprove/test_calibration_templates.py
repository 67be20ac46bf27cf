"""Calibration (declared vs verified successes, Wilson interval, the brief's warning) and reasoning templates
mined from successful, verified episodes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tempera.core.brief import build_brief, session_brief
from tempera.core.memory import Memory
from tempera.core.models import Context, Episode, Intent, Outcome, TestRun, ValidityScope, VerificationState
from tempera.core.project import ProjectRef, project_for_path
from tempera.core.selfimprove import calibration, templates

PASS = VerificationState.TESTS_PASS


@pytest.fixture
def shop(tmp_path: Path, mem: Memory) -> ProjectRef:
    (tmp_path / "shop" / ".git").mkdir(parents=True)
    ref = project_for_path(tmp_path / "shop")
    mem.store.projects.ensure(ref)
    return ref


def episode(
    ref: ProjectRef,
    *,
    task: str = "bugfix",
    status: str = "success",
    verification=VerificationState.UNTESTED,
    read: tuple[str, ...] = (),
    edit: tuple[str, ...] = (),
    commands: tuple[str, ...] = (),
    tests_after: tuple[bool, ...] = (),
    domains: tuple[str, ...] = (),
    scope: str = "project",
) -> Episode:
    return Episode(
        project_id=ref.id,
        project_name=ref.name,
        project_path=ref.path,
        summary=f"{task} work {edit}",
        intent=Intent(task_type=task, domains=list(domains), scope=ValidityScope.parse(scope)),
        context=Context(files_read=list(read), files_modified=list(edit), commands=list(commands)),
        outcome=Outcome(
            status=status,
            verification=verification,
            tests_after=[TestRun(command="pytest -q", passed=p) for p in tests_after],
        ),
    )


def test_wilson_interval() -> None:
    assert calibration.wilson(0, 0) == (0.0, 1.0)
    low, high = calibration.wilson(8, 10)
    assert round(low, 3) == 0.490 and round(high, 3) == 0.943
    low, high = calibration.wilson(0, 5)
    assert low == 0.0 and round(high, 3) == 0.434


def test_declared_vs_verified_and_the_brief_warning(mem: Memory, shop: ProjectRef) -> None:
    eps = [
        episode(shop, verification=PASS),
        episode(shop, tests_after=(True,)),
        episode(shop, tests_after=(True, False)),
        episode(shop),
        episode(shop, status="failure"),
    ]
    mem.store.add_many(eps)
    [bugfix] = calibration.buckets(mem.db, project_id=shop.id)
    assert (bugfix.declared, bugfix.verified) == (4, 2)
    assert calibration.warning(mem.db, mem.config.selfimprove, shop.id) is None  # fewer than 5 declared
    mem.store.add_many([episode(shop), episode(shop)])
    warn = calibration.warning(mem.db, mem.config.selfimprove, shop.id, "bugfix")
    assert warn is not None and (warn.declared, warn.verified) == (6, 2)
    line = build_brief(mem, shop.id, [], task_type="bugfix").render()
    assert "Calibration: 2 of 6 declared bugfix successes in shop were verified (33%; 95% interval" in line
    assert build_brief(mem, shop.id, [], task_type="feature").calibration is None
    assert session_brief(mem, shop.id).calibration == warn


def test_work_with_nothing_to_test_gets_no_calibration_warning(mem: Memory, shop: ProjectRef) -> None:
    mem.store.add_many([episode(shop, task="research") for _ in range(8)])
    mem.store.add_many([episode(shop, task="docs", edit=("README.md",)) for _ in range(8)])
    assert {(b.task_type, b.verified) for b in calibration.buckets(mem.db, project_id=shop.id)} == {
        ("research", 0),
        ("docs", 0),
    }
    assert calibration.warning(mem.db, mem.config.selfimprove, shop.id) is None
    assert session_brief(mem, shop.id).calibration is None


def test_verification_advancing_later_is_picked_up(mem: Memory, shop: ProjectRef) -> None:
    eps = [episode(shop) for _ in range(5)]
    mem.store.add_many(eps)
    assert calibration.warning(mem.db, mem.config.selfimprove, shop.id) is not None
    for ep in eps[:3]:
        ep.outcome.verification = VerificationState.MERGED
        mem.store.update(ep, reembed=False)
    assert calibration.buckets(mem.db, project_id=shop.id)[0].verified == 3
    assert calibration.warning(mem.db, mem.config.selfimprove, shop.id) is None


def test_history_survives_pruning(mem: Memory, shop: ProjectRef) -> None:
    ep = episode(shop, verification=PASS)
    mem.store.add(ep)
    calibration.buckets(mem.db)
    mem.store.delete(ep.id)
    assert calibration.buckets(mem.db, project_id=shop.id)[0].verified == 1


def test_calibration_cli(tempera: Callable, mem: Memory, shop: ProjectRef) -> None:
    mem.store.add_many([episode(shop, verification=PASS), episode(shop, task="feature")])
    code, out, _ = tempera("lessons", "calibration", "--project", shop.path, "--json")
    rows = {r["task_type"]: r for r in json.loads(out)}
    assert code == 0 and rows["bugfix"]["ratio"] == 1.0 and rows["feature"]["verified"] == 0
    _, out, _ = tempera("lessons", "calibration", "--project", shop.path, "--task-type", "feature")
    assert "feature" in out and "bugfix" not in out


def auth_fix(ref: ProjectRef, n: int, **kw: object) -> Episode:
    return episode(
        ref,
        read=("src/auth/session.py", f"src/auth/h{n}.py"),
        edit=(f"src/auth/h{n}.py",),
        commands=("git diff", "pytest -q"),
        tests_after=(True,),
        domains=("auth",),
        **({"verification": PASS} | kw),
    )  # type: ignore[arg-type]


def test_mined_template_is_the_common_ordered_action_sequence(mem: Memory, shop: ProjectRef) -> None:
    mem.store.add_many([auth_fix(shop, n) for n in range(3)] + [episode(shop, edit=("README.md",))])
    written = templates.extract_templates(mem)
    by_key = {(t.task_type, t.domain): t for t in written}
    assert set(by_key) == {("bugfix", ""), ("bugfix", "auth")}
    auth = by_key[("bugfix", "auth")]
    # session.py is read every time; each episode reads and edits another handler of src/auth/
    assert auth.steps == [
        "read src/auth/session.py",
        "read src/auth/*.py",
        "edit src/auth/*.py",
        "run git diff",
        "run the tests (pytest)",
    ]
    assert (auth.extracted_by, len(auth.evidence), auth.transferable) == ("mined", 3, False)
    assert templates.extract_templates(mem) == []  # same evidence: nothing rewritten
    found = templates.get_template(mem.db, shop.id, "bugfix", "AUTH")
    assert found is not None and found.steps == auth.steps
    assert templates.get_template(mem.db, shop.id, "bugfix", "billing").domain == ""  # the general one
    text = build_brief(mem, shop.id, [], task_type="bugfix", domain="auth").render()
    assert "Reasoning template for bugfix/auth" in text and "1. read src/auth/session.py" in text


def test_only_successful_sufficiently_verified_episodes_count(mem: Memory, shop: ProjectRef, monkeypatch) -> None:
    mem.store.add_many(
        [
            auth_fix(shop, 0),
            auth_fix(shop, 1, status="partial"),
            auth_fix(shop, 2, verification=VerificationState.UNTESTED),
        ]
    )
    assert templates.extract_templates(mem) == []  # the partial one does not count: 2 of 3 needed
    monkeypatch.setenv("TEMPERA_DREAM__TEMPLATES_MIN_EVIDENCE", "2")
    lenient = Memory(use_model=False)
    try:
        assert {t.domain for t in templates.extract_templates(lenient)} == {"", "auth"}
        monkeypatch.setenv("TEMPERA_DREAM__TEMPLATES_MIN_VERIFICATION_WEIGHT", "0.4")  # untested weighs 0.30
        strict = Memory(use_model=False)
        assert templates.extract_templates(strict, project_id=shop.id) == []
        strict.close()
    finally:
        lenient.close()


def test_transferable_templates_cross_projects(mem: Memory, shop: ProjectRef, tmp_path: Path) -> None:
    mem.store.add_many([auth_fix(shop, n, scope="domain:auth") for n in range(3)])
    templates.extract_templates(mem)
    other = project_for_path(tmp_path / "other")
    assert templates.get_template(mem.db, other.id, "bugfix", "auth") is None
    crossed = templates.get_template(mem.db, other.id, "bugfix", "auth", cross_project=True)
    assert crossed is not None and crossed.project == "shop" and crossed.transferable
    assert "[from shop]" in build_brief(mem, other.id, [], "bugfix", "auth", cross_project=True).render()


def test_templates_cli(tempera: Callable, mem: Memory, shop: ProjectRef) -> None:
    mem.store.add_many([auth_fix(shop, n) for n in range(3)])
    code, out, _ = tempera("lessons", "templates", "extract", "--max-usd", "0", "--json")
    assert code == 0 and {t["domain"] for t in json.loads(out)} == {"", "auth"}
    _, out, _ = tempera("lessons", "templates", "list")
    assert "bugfix/auth  [shop]" in out and "1. read src/auth/session.py" in out
    _, out, _ = tempera(
        "lessons", "templates", "get", "--task-type", "bugfix", "--domain", "auth", "--project", shop.path, "--json"
    )
    assert json.loads(out)["steps"][0] == "read src/auth/session.py"
    _, out, _ = tempera("lessons", "templates", "get", "--task-type", "docs", "--project", shop.path)
    assert out.startswith("No template for docs/-")
