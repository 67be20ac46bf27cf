"""`--set section.key=value` of the real-session evals: the sandbox clears the caller's TEMPERA_* variables so that
figures do not depend on the shell, and `--set` is the one way a knob reaches the run, checked when parsed."""

from __future__ import annotations

import argparse

import pytest

from evals import real_sessions
from tempera.core.config import load_config


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser()
    real_sessions.add_set_option(ap)
    return ap


def test_a_set_key_reaches_the_sandbox_and_the_callers_own_does_not(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEMPERA_RETRIEVAL__RRF_K", "5")
    default = load_config(environ={}).retrieval.rrf_k
    with real_sessions.sandbox("set") as box:
        assert load_config().retrieval.rrf_k == default != 5
    real_sessions.use_settings(parser().parse_args(["--set", "retrieval.rrf_k=31"]).set)
    try:
        with real_sessions.sandbox("set") as box:
            assert load_config().retrieval.rrf_k == 31
            assert box.env["TEMPERA_RETRIEVAL__RRF_K"] == "31"
    finally:
        real_sessions.use_settings([])


@pytest.mark.parametrize(
    ("arg", "says"),
    [
        ("retrieval.rrf_k=many", "valid integer"),
        ("retrieval.rrf_kk=30", "no [retrieval] rrf_kk"),
        ("rrf_k=30", "expected section.key=value"),
    ],
)
def test_a_bad_setting_stops_the_run_before_it_starts(arg: str, says: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parser().parse_args(["--set", arg])
    assert says in capsys.readouterr().err
