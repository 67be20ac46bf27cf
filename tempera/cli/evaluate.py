"""`tempera eval run`: the retrieval eval harness on the CLI."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import click

from tempera.cli.common import emit, json_option
from tempera.core import paths
from tempera.core.config import load_config
from tempera.core.errors import NotFound
from tempera.core.memory import Memory
from tempera.core.retrieve import MODES


@click.group("eval")
def eval_group() -> None:
    """Retrieval evaluation (P@k, R@k, MRR, nDCG@k) against graded fixtures."""


def _baseline_path(name: str) -> Path:
    return paths.data_dir() / paths.EVAL_BASELINES_DIR / f"{name}.json"


@eval_group.command("run")
@click.option(
    "--fixture",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSON lines {id, query, relevant:[{id, grade}], project?, tags?}.",
)
@click.option(
    "--corpus",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Load this corpus (tempera_capture JSON lines with an `id`) into a scratch database first; "
    "without it the fixture runs against your own memory.",
)
@click.option("--mode", type=click.Choice([*MODES, "all"]), default="all", show_default=True)
@click.option("--k", type=click.IntRange(1, 100), default=5, show_default=True)
@click.option("--save-baseline", metavar="NAME", help="Save these figures as baseline NAME.")
@click.option("--compare", "compare_to", metavar="NAME", help="Print deltas against baseline NAME.")
@json_option
def eval_run(
    fixture: Path,
    corpus: Path | None,
    mode: str,
    k: int,
    save_baseline: str | None,
    compare_to: str | None,
    as_json: bool,
) -> None:
    """Run every fixture query in each mode and print the figures (overall and per tag)."""
    from tempera.evaluation.harness import compare, evaluate, load_corpus, load_fixture

    queries = load_fixture(fixture)
    modes = list(MODES) if mode == "all" else [mode]
    with tempfile.TemporaryDirectory(prefix="tempera-eval-") as scratch:
        db_path = Path(scratch) / "eval.db" if corpus else None
        with Memory(load_config(), db_path) as mem:
            if corpus:
                load_corpus(mem, corpus)
            results = {m: evaluate(mem, queries, mode=m, k=k) for m in modes}
    report: dict[str, Any] = {
        "fixture": str(fixture),
        "corpus": str(corpus) if corpus else None,
        "k": k,
        "results": {m: {"overall": r["overall"], "by_tag": r["by_tag"]} for m, r in results.items()},
    }
    if compare_to:
        path = _baseline_path(compare_to)
        if not path.exists():
            raise NotFound(f"no baseline named {compare_to!r} (saved ones live in {path.parent})")
        base = json.loads(path.read_text(encoding="utf-8"))
        report["deltas"] = {m: compare(results[m], base["results"][m]) for m in modes if m in base["results"]}
    if save_baseline:
        path = _baseline_path(save_baseline)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=2), encoding="utf-8")
    emit(report, as_json, _render)


def _render(report: dict[str, Any]) -> None:
    k = report["k"]
    cols = [f"P@{k}", f"R@{k}", "MRR", f"nDCG@{k}"]
    click.echo(f"{'mode':<9}{'slice':<16}" + "".join(f"{c:>9}" for c in cols) + f"{'n':>6}")
    for mode, r in report["results"].items():
        for name, agg in [("overall", r["overall"]), *r["by_tag"].items()]:
            click.echo(f"{mode:<9}{name:<16}" + "".join(f"{agg[c]:>9.3f}" for c in cols) + f"{agg['n']:>6}")
    for mode, d in report.get("deltas", {}).items():
        click.echo(f"delta vs baseline ({mode}): " + ", ".join(f"{m} {v:+.3f}" for m, v in d.items()))


COMMANDS = [eval_group]
