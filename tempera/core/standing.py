"""A cosine's standing: how far a prompt's cosine to an episode stands out from what unrelated text scores
against the same store.

Cosine scales differ by model: MiniLM's unrelated pairs score ~0.0 +- 0.065 (the entire-cli and cipher-box stores
alike), bge-small's ~0.5, so a fixed floor or a fitted weight on the raw cosine means something else on each. The
standing is (cosine - centre) / spread of the store's background of unrelated pairs: the cosines of a few REFERENCE
prompts, about nothing any project holds, to the store's episodes and to each other (which gives an empty or small
store a background too). The centre is the median and the spread the scaled median absolute deviation. Any
increasing affine map of every cosine (`0.5 + 0.5 * cos`) leaves each standing as it was, so the floors and the gate
that read standings decide the same on every model (issue #38).

The background is the store's, not the query's: against its own cosines to the store, an unrelated prompt's best
hit stands out as far as a related prompt's does (measured on the replayed entire-cli sessions: the best hit's
standing told later first prompts from unrelated ones at AUC 0.52 that way, against 0.97 for the raw cosine).
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from tempera.core.db import Database
    from tempera.core.embed import Embedder

MAD_TO_SD = 1.4826  # the median absolute deviation of a normal distribution times this is its standard deviation
MIN_SPREAD = 1e-6  # relative to the cosine scale: a background of identical cosines (one vector) has no spread

# Work and questions no project's memory is about, in the shapes stored text takes (a summary of a session, a
# question): the background of a store too small to have one of its own.
REFERENCE = (
    "Baked a sourdough loaf with a longer cold proof overnight",
    "Planned a three-day hiking route through the Dolomites with hut stays",
    "Compared fixed and variable mortgage rates from three banks",
    "Repotted the monstera and moved it away from the radiator",
    "Wrote a birthday toast for my sister's wedding reception",
    "Learned the chord progression of a jazz standard on the piano",
    "Sorted the family photo archive by year and removed duplicates",
    "Booked train tickets from Vienna to Venice for the spring holiday",
    "Translated a restaurant menu from Portuguese into English",
    "Drafted a letter to the landlord about the broken boiler",
    "Summarised the causes of the French Revolution for a history essay",
    "Trained for a half marathon with interval runs on Tuesdays",
    "What is the capital of Australia and why was it chosen",
    "How long should I boil an egg for a soft yolk",
    "Recommend a novel about the sea for a long flight",
    "Which houseplants survive in a dark north-facing room",
    "Configured a home Wi-Fi mesh network for three floors",
    "Fixed the layout of a CSS grid that overflowed on small phones",
    "Set up nightly backups of a Postgres database to object storage",
    "Wrote a spreadsheet formula that totals expenses per month",
    "Tuned the autovacuum settings of a busy Postgres table",
    "Migrated a WordPress blog to a static site generator",
    "Replaced a failing hard drive in a NAS and rebuilt the RAID",
    "Explained the difference between TCP and UDP to a student",
)


@dataclass(frozen=True)
class Background:
    """The centre and spread of a store's unrelated pairs: a cosine's standing is how many spreads it lies above."""

    centre: float
    spread: float

    def standing(self, cosine: float) -> float:
        return (cosine - self.centre) / self.spread

    def cosine(self, standing: float) -> float:
        """The cosine at this standing: a line drawn in standings, on this store's scale."""
        return self.centre + standing * self.spread


def of(sims: "np.ndarray") -> Background:
    """The centre and spread of these cosines."""
    import numpy as np

    centre = float(np.median(sims))
    mad = float(np.median(np.abs(sims - centre))) * MAD_TO_SD
    spread = mad if mad > MIN_SPREAD else max(float(np.std(sims)), MIN_SPREAD)
    return Background(centre, spread)


def background(reference: "np.ndarray", vectors: "np.ndarray") -> Background:
    """The background of unrelated pairs: each reference prompt's cosines to the store's `vectors` (none, or a
    sample) and to the other reference prompts."""
    import numpy as np

    among = reference @ reference.T
    pairs = [among[~np.eye(len(reference), dtype=bool)]]
    if len(vectors) and vectors.shape[1] == reference.shape[1]:
        pairs.append((reference @ vectors.T).ravel())
    return of(np.concatenate(pairs))


def reference_vectors(db: Database, embedder: Embedder) -> "np.ndarray":
    """The REFERENCE texts' vectors by the store's model: embedded once per database and model, kept in `meta`
    (a one-shot process pays a read, not 24 model runs)."""
    import numpy as np

    key = (
        "standing_reference:"
        + hashlib.sha256((embedder.spec.name + "\0" + "\n".join(REFERENCE)).encode("utf-8")).hexdigest()[:16]
    )
    cached = db.meta_get(key)
    if cached is not None:
        return np.frombuffer(base64.b64decode(cached), dtype=np.float32).reshape(len(REFERENCE), -1)
    vectors = np.asarray(embedder.embed(list(REFERENCE)), dtype=np.float32)
    db.meta_set(key, base64.b64encode(vectors.tobytes()).decode("ascii"))
    return vectors
