"""Fitting the UserPromptSubmit gate (inject/warm.py: P(relevant) of a hit by logistic regression over
GATE_FEATURES). One home for the fit: `evals/fit_gate.py` fits the shipped defaults on labelled dev pools, and
`tempera learn refit-gate` refits them on the user's own injection log, where capture judged each shown hit used or
ignored (core/learning/implicit.py, column `used`; the gate's features are in each row's `scores`).

The log is a biased sample: only hits that cleared the gate were shown, so only they have verdicts. A refit learns
how to rank and calibrate what the gate already lets through; it sees nothing of what it keeps out. So the fit is
pulled toward the weights in use (`REFIT_L2`, not toward zero), the bar stays, and the report says how many of the
held-out injections the refit would have dropped at that bar and how often those were used.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from tempera.core.db import Database
from tempera.core.errors import InvalidInput
from tempera.inject.heldout import HELD_OUT_SHARE, split_by_session
from tempera.inject.warm import GATE_FEATURES, gate_probability

PARAMETERS = len(GATE_FEATURES) + 1  # the intercept and one weight per feature
MIN_FIT_PER_VERDICT = 10 * PARAMETERS  # events per variable: fewer, and logistic weights are mostly noise
MIN_HELD_OUT_PER_VERDICT = 10  # fewer, and the held-out comparison says nothing
REFIT_L2 = 1.0  # each row weighs 1: a pull toward the weights in use that a few dozen judged rows outweigh
NEWTON_DAMPING = 1e-6  # added to the Hessian so a step exists where every P is saturated
NEWTON_TOLERANCE = 1e-8  # a step no weight moves by more than this ends the fit
CALIBRATION_BINS = 5  # equal-count bins of P for the calibration error


def fit_logistic(x: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float, prior: np.ndarray | None = None) -> np.ndarray:
    """Weighted logistic regression by Newton's method, L2 toward `prior` (default zero; the intercept is free);
    returns intercept then one weight per column. Each step is damped and halved until the penalised loss falls:
    from weights that saturate every P (a user's extreme gate_weights as the prior) the Hessian is singular and a
    plain Newton step fails or overshoots."""
    a = np.hstack([np.ones((len(x), 1)), x])
    centre = np.zeros(a.shape[1]) if prior is None else np.asarray(prior, dtype=np.float64)
    beta = centre.copy()
    reg = l2 * np.eye(a.shape[1])
    reg[0, 0] = 0.0

    def loss(b: np.ndarray) -> float:
        z, d = a @ b, b - centre
        return float(w @ (np.logaddexp(0.0, z) - y * z) + 0.5 * d @ reg @ d)

    current = loss(beta)
    for _ in range(100):
        p = gate_probability(x, beta.tolist())
        grad = a.T @ (w * (p - y)) + reg @ (beta - centre)
        hess = (a * (w * p * (1 - p))[:, None]).T @ a + reg + NEWTON_DAMPING * np.eye(a.shape[1])
        step = np.linalg.solve(hess, grad)
        while (trial := loss(beta - step)) > current and np.abs(step).max() >= NEWTON_TOLERANCE:
            step = step / 2
        if trial > current:  # no step lowers the loss: at the optimum to within rounding
            break
        beta, current = beta - step, trial
        if np.abs(step).max() < NEWTON_TOLERANCE:
            break
    return beta


@dataclass(frozen=True)
class Judged:
    """One injected hit the gate scored, and capture's verdict on it."""

    session_id: str
    created_at: str
    features: list[float]  # in GATE_FEATURES order
    used: bool


def judged_rows(db: Database) -> tuple[list[Judged], int]:
    """The judged UserPromptSubmit injections with the gate's features, oldest first, and how many judged ones lack
    them (logged before the log kept them, or by the keyword-only path, which has no P); those still load, and are
    left out."""
    rows = db.query(
        "SELECT session_id, created_at, scores, used FROM injections WHERE event = 'UserPromptSubmit' "
        "AND evaluated_at IS NOT NULL AND used IS NOT NULL ORDER BY created_at, id"
    )
    judged, without = [], 0
    for session_id, created_at, scores, used in rows:
        gate = json.loads(scores or "{}").get("gate")
        if not isinstance(gate, dict) or not all(isinstance(gate.get(k), (int, float)) for k in GATE_FEATURES):
            without += 1
            continue
        judged.append(Judged(session_id, created_at, [float(gate[k]) for k in GATE_FEATURES], bool(used)))
    return judged, without


@dataclass(frozen=True)
class Figures:
    """How well one set of weights predicts the verdicts of some rows."""

    rows: int
    used_share: float
    mean_p: float  # next to used_share: calibration in the large
    calibration_error: float  # mean |P - used share| over equal-count bins of P, weighted by rows
    log_loss: float
    brier: float
    accuracy: float  # P >= 0.5 read as "used"
    auc: float | None  # P(a used row has a higher P than an ignored one); None without both verdicts
    kept_at_bar: int  # rows whose P clears the gate's bar
    used_share_kept: float | None
    used_share_dropped: float | None


def figures(weights: list[float], rows: list[Judged], bar: float) -> Figures:
    x = np.array([r.features for r in rows], dtype=np.float64).reshape(len(rows), len(GATE_FEATURES))
    y = np.array([r.used for r in rows], dtype=np.float64)
    p = gate_probability(x, weights)
    q = np.clip(p, 1e-6, 1 - 1e-6)
    kept = p >= bar
    bins = np.array_split(np.argsort(p, kind="stable"), min(CALIBRATION_BINS, len(rows)))
    return Figures(
        rows=len(rows),
        used_share=_round(y.mean()),
        mean_p=_round(p.mean()),
        calibration_error=_round(sum(len(b) * abs(p[b].mean() - y[b].mean()) for b in bins) / len(rows)),
        log_loss=_round(-np.mean(y * np.log(q) + (1 - y) * np.log(1 - q))),
        brier=_round(np.mean((p - y) ** 2)),
        accuracy=_round(np.mean((p >= 0.5) == (y == 1))),
        auc=_auc(p, y),
        kept_at_bar=int(kept.sum()),
        used_share_kept=_round(y[kept].mean()) if kept.any() else None,
        used_share_dropped=_round(y[~kept].mean()) if (~kept).any() else None,
    )


def _round(value: "float | np.floating[Any]") -> float:
    return round(float(value), 4)


def _auc(p: np.ndarray, y: np.ndarray) -> float | None:
    """Mann-Whitney: the rank sum of the used rows, ties counted half."""
    n_used, n_ignored = int(y.sum()), int(len(y) - y.sum())
    if not n_used or not n_ignored:
        return None
    _, inverse, counts = np.unique(p, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    ranks = ((ends - counts + 1 + ends) / 2)[inverse]
    return _round((ranks[y == 1].sum() - n_used * (n_used + 1) / 2) / (n_used * n_ignored))


@dataclass(frozen=True)
class Refit:
    """What `tempera learn refit-gate` reports: the counts, the refit weights, both sets on the held-out sessions."""

    features: list[str]
    without_features: int
    fit_rows: int
    fit_sessions: int
    held_out_sessions: int
    bar: float
    current: list[float]
    refit: list[float]
    held_out_current: Figures
    held_out_refit: Figures

    @property
    def better(self) -> bool:
        """The refit predicts the held-out verdicts better (lower log loss) than the weights in use, and ranks them
        at least as well (AUC). Log loss alone is not enough: "used" is rarer than the "relevant" the shipped weights
        were fitted to, so a refit that only lowers every P wins on log loss while the gate, at the same bar, drops
        injections that were used as often as those it keeps (seen on the replayed entire-cli sessions)."""
        now, new = self.held_out_current, self.held_out_refit
        return new.log_loss < now.log_loss and (new.auc or 0.0) >= (now.auc or 0.0)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "better": self.better}


def refit(db: Database, current: list[float], bar: float) -> Refit:
    """Refit the gate's weights on the judged injections of the earlier sessions and compare them with `current`
    on the later ones; InvalidInput, saying the numbers, when the log has too few verdicts for either."""
    rows, without = judged_rows(db)
    fit, held = split_by_session(rows)
    counts = {
        name: (sum(r.used for r in part), sum(not r.used for r in part))
        for name, part in (("fit", fit), ("held", held))
    }
    if min(counts["fit"]) < MIN_FIT_PER_VERDICT or min(counts["held"]) < MIN_HELD_OUT_PER_VERDICT:
        raise InvalidInput(
            f"too few judged injections to refit the gate: it needs {MIN_FIT_PER_VERDICT} used and "
            f"{MIN_FIT_PER_VERDICT} ignored in the earlier sessions it fits on (10 per fitted weight, the "
            f"events-per-variable rule below which logistic weights are mostly noise) and {MIN_HELD_OUT_PER_VERDICT} "
            f"of each in the later sessions ({HELD_OUT_SHARE:.0%} of the rows) it checks them on; the log has "
            f"{counts['fit'][0]} used / {counts['fit'][1]} ignored to fit on and {counts['held'][0]} / "
            f"{counts['held'][1]} to check on"
            + (f" ({without} more judged without the gate's features, left out)" if without else "")
        )
    x = np.array([r.features for r in fit], dtype=np.float64)
    y = np.array([r.used for r in fit], dtype=np.float64)
    beta = fit_logistic(x, y, np.ones(len(fit)), REFIT_L2, prior=np.asarray(current, dtype=np.float64))
    weights = [round(float(b), 4) for b in beta]
    return Refit(
        features=list(GATE_FEATURES),
        without_features=without,
        fit_rows=len(fit),
        fit_sessions=len({r.session_id for r in fit}),
        held_out_sessions=len({r.session_id for r in held}),
        bar=bar,
        current=list(current),
        refit=weights,
        held_out_current=figures(list(current), held, bar),
        held_out_refit=figures(weights, held, bar),
    )
