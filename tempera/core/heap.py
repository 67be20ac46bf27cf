"""Giving the memory a process freed back to the system, where the C library holds on to it.

glibc's malloc keeps freed memory below the top of its heaps for the next allocation, so a burst of temporary
allocations (an ONNX model's load folds its int8 weights into float32 through copies that are freed at once) stays
in the process's resident memory for its whole life. `malloc_trim(0)` returns those pages. Elsewhere (macOS, musl)
there is no such call and nothing to do.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable


@functools.cache
def _trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, or None where the C library has none (the process's own symbols: no library search)."""
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


def release() -> None:
    """Return the memory freed so far to the system (after a burst of temporary allocations), where possible."""
    trim = _trim()
    if trim is not None:
        trim(0)
