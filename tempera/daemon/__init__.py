"""The daemon: the warm model, the database and each project's vectors, kept by one process per data dir.

One BLAS thread in this process: its in-memory KNN is one small matrix-vector product per prompt, and a second
BLAS thread spinning for a core that Claude Code is using made it slower than sqlite-vec under load. Set here,
on importing the package, so both `python -m tempera.daemon run` and `tempera daemon run` have it before numpy.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
