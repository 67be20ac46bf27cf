"""Typed configuration: defaults (the original Tempera's, github.com/anvanster/tempera), then
~/.tempera/config.toml, then TEMPERA_SECTION__KEY env vars."""

from __future__ import annotations

import os
import re
import stat
import sys
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from tempera.core import defaults, paths, settings
from tempera.core.errors import InvalidInput
from tempera.core.ranking import SalienceWeights


# The UserPromptSubmit gate (inject/warm.py `choose`) on standings, not cosines: the weights, bar and top share that
# evals/fit_gate.py fitted on dev data (2026-12-01), the weights carried onto standings, so that on MiniLM it decides
# as before and on any other model the same (docs/experiments/gate-standing.md).
GATE_WEIGHTS = (-4.337, 0.392, -0.48, -0.1586, 0.4069, 1.3282, 1.0806)
GATE_BAR = 0.12
GATE_TOP_SHARE = 0.5


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class GeneralConfig(_Section):
    disabled: bool = Field(False, description="Kill-switch: every hook becomes a no-op (also TEMPERA_DISABLE=1)")


class EmbeddingConfig(_Section):
    model: str = Field("BAAI/bge-small-en-v1.5", description="fastembed model used when it is in the cache")
    model_path: str | None = Field(None, description="A local ONNX model directory (no download ever)")
    cache_dir: str | None = Field(
        None, description="Model cache; FASTEMBED_CACHE_DIR overrides; default DATA_DIR/models"
    )
    use_offline_package: bool = Field(
        True, description="Use the `offline` extra's MiniLM when the default is not cached"
    )


class RetrievalConfig(_Section):
    mode: Literal["vector", "keyword", "hybrid"] = "hybrid"
    utility_effect: float = Field(
        defaults.UTILITY_EFFECT,
        ge=0,
        le=1,
        description="score = relevance x salience; utility 1 (or 0) multiplies a score by 1 + (or -) this, "
        "0.5 leaves it alone",
    )
    verification_effect: float = Field(
        defaults.VERIFICATION_EFFECT,
        ge=0,
        le=1,
        description="Salience bonus of the best verification state (stable_no_revert); untested adds nothing",
    )
    freshness_floor: float = Field(
        defaults.FRESHNESS_FLOOR,
        ge=0,
        le=1,
        description="Salience share a fully decayed episode keeps: decay ranks stale below fresh, never erases it",
    )
    query_evidence_effect: float = Field(
        defaults.QUERY_EVIDENCE_EFFECT,
        ge=0,
        le=1,
        description="How far verdicts of past injections for similar prompts (word overlap) move a score; 0 = off",
    )
    outcome_link_weight: float = Field(
        defaults.OUTCOME_LINK_WEIGHT,
        ge=0,
        description="Weight, beside one injection's verdict, of a later session with a similar prompt that changed a "
        "file the episode changed (query evidence; 0 = links count for nothing)",
    )
    recency_weight: float = Field(0.0, ge=0, le=1, description="Share of a score that fades with age (0 = off)")
    recency_halflife_days: float = Field(30.0, ge=0.01, le=1e6)
    mmr_lambda: float = Field(0.7, ge=0, le=1, description="MMR diversity (0 = diverse, 1 = relevant)")
    mmr_redundancy_floor: float = Field(
        0.7,
        ge=0,
        lt=1,
        description="MMR counts only term overlap (Jaccard, for hits without vectors) above this as redundancy "
        "(near-duplicates), not mere shared topic",
    )
    mmr_redundancy_standing: float = Field(
        10.5,
        ge=0,
        description="MMR counts only a cosine whose standing (core/standing.py) is above this as redundancy: 10.5 is "
        "MiniLM's 0.7 on the real stores' backgrounds, and the same line on any other model",
    )
    min_standing: float = Field(
        4.4,
        ge=0,
        description="Vector hits whose cosine stands fewer than this many spreads above the store's background of "
        "unrelated pairs are dropped (core/standing.py; 4.4 is a cosine of ~0.3 in MiniLM space, whose unrelated "
        "pairs score ~0.01 +- 0.065, and the same line on any other model)",
    )
    rrf_k: int = Field(
        20, ge=1, description="RRF rank constant; smaller lets one list's top hits count more than agreement lower down"
    )
    hybrid_keyword_max_weight: float = Field(
        4.0,
        ge=0,
        description="Weight in hybrid RRF of a BM25 hit that holds every query word "
        "(vector = 1; evals/fit_fusion.py, tempera learn refit-fusion)",
    )
    hybrid_keyword_coverage_power: float = Field(
        2.5,
        ge=0,
        description="A BM25 hit holding a share c of the query's words weighs "
        "hybrid_keyword_max_weight x c^this (0 = every hit the full weight; evals/fit_fusion.py, "
        "tempera learn refit-fusion)",
    )
    hybrid_vote_margin: float = Field(
        0.75,
        ge=0,
        description="In hybrid, an episode with explicit votes counts as holding as many of the query's words as the "
        "best-covered hit whose standing is above its own by at most this (helpful votes), or as few as the "
        "least-covered one below it by at most this (unhelpful): so near (0.75: 0.05 of MiniLM's cosine) a missing "
        "word is wording, and the votes decide (0 = off)",
    )
    hybrid_vector_window: float = Field(
        1.5,
        ge=0,
        description="In hybrid, a vector hit below min_standing still counts when its standing is within this of "
        "the best hit's, down to half of min_standing (0 = the fixed floor only)",
    )
    hybrid_names_weight: float = Field(
        2.0,
        ge=0,
        description="Weight in hybrid RRF of the list of episodes "
        "that name the files and code identifiers the prompt names (0 = off)",
    )
    hybrid_code_weight: float = Field(
        0.0,
        ge=0,
        description="Weight in hybrid RRF of the list of episodes that touched the code the prompt names (its "
        "symbols and the files defining them) or the work tree has changed (core/symbols.py; 0 = off: fitted 4 on "
        "entire-cli's earlier prompts, its lift on the later ones and on cipher-box is not shown, "
        "docs/experiments/code-signal.md)",
    )
    candidates: int = Field(50, ge=5, le=1000, description="Candidates drawn from each index before fusion")
    time_in_questions: bool = Field(
        True,
        description='Prompts about time ("yesterday", "in June", "the first '
        'time", "before the migration") use episode dates (core/timeq.py)',
    )

    @model_validator(mode="before")
    @classmethod
    def _drop_retired(cls, data: Any) -> Any:
        """Knobs of earlier rankings (`tempera config init` wrote the additive blend's weights into config files) no
        longer mean anything."""
        return _without(data, RETIRED_RETRIEVAL_KEYS)

    def salience_weights(self) -> SalienceWeights:
        return SalienceWeights(
            self.utility_effect,
            self.verification_effect,
            self.freshness_floor,
            self.recency_weight,
            self.recency_halflife_days,
        )


RETIRED_RETRIEVAL_KEYS = frozenset(
    {"similarity_weight", "utility_weight", "hybrid_similarity_weight", "hybrid_utility_weight"}
    # the BM25 list's base weight and its cut at half the best score, replaced by each hit's coverage
    | {"hybrid_keyword_weight", "hybrid_keyword_min_ratio"}
    # floors on MiniLM's cosine scale, replaced by floors on standings (core/standing.py)
    | {"min_similarity", "hybrid_vector_min_ratio"}
)
RETIRED_INJECT_KEYS = frozenset({"min_similarity"})  # the fixed cosine floor, replaced by gate_bar


def _without(data: Any, retired: frozenset[str]) -> Any:
    """A section's raw document without keys that older versions wrote and that no longer mean anything."""
    return {k: v for k, v in data.items() if k not in retired} if isinstance(data, dict) else data


class BellmanConfig(_Section):
    gamma: float = Field(0.9, gt=0, le=1)
    alpha: float = Field(0.1, gt=0, le=1)
    propagation_threshold: float = Field(0.5, ge=0, le=1)
    max_propagation_depth: int = Field(2, ge=1, le=10)
    temporal_credit_window_hours: float = Field(1.0, ge=0)
    epsilon: float = Field(0.001, gt=0)
    neighbours: int = Field(10, ge=1, le=100, description="Nearest neighbours (sqlite-vec KNN) looked at per hop")
    source_min_evidence: float = Field(
        1.0,
        gt=0,
        description="Direct (explicit + implicit) evidence weight an episode needs before its value propagates",
    )
    temporal_credit_weight: float = Field(
        0.3, ge=0, description="Helpful pseudo-count a success gives the episode right before it"
    )
    temporal_credit_decay: float = Field(0.5, ge=0, le=1, description="Factor per further step back in time")
    temporal_credit_max_steps: int = Field(10, ge=1, le=100, description="Earlier episodes one success credits")
    session_window_hours: float = Field(
        2.0,
        ge=0,
        description="Link episodes of one project across sessions "
        "when this close in time (the original Tempera's 2-hour rule)",
    )
    link_credit_share: float = Field(
        0.25,
        ge=0,
        le=1,
        description="Share of an episode's direct evidence its linked episodes receive (times the link weight)",
    )
    implicit_helpful_weight: float = Field(0.7, ge=0, description="Injected, used, and the turn succeeded")
    implicit_ignored_weight: float = Field(0.05, ge=0, description="Injected and ignored (unhelpful side)")
    implicit_chronic_sessions: int = Field(
        3,
        ge=1,
        description="Sessions an episode is injected into and ignored in, never used, before its ignores "
        "weigh implicit_chronic_weight (chronic, from that session on)",
    )
    implicit_chronic_weight: float = Field(
        0.5, ge=0, description="Injected and ignored once chronic: each such session from then on (unhelpful side)"
    )
    implicit_corrected_weight: float = Field(0.7, ge=0, description="Injected, used, then corrected by the user")


class CaptureConfig(_Section):
    auto_capture: bool = True
    extract_intent_llm: bool = True
    capture_diffs: bool = True
    ask_back_on_failure: bool = True
    max_summary_chars: int = Field(20_000, ge=100, description="Longer summaries are refused, not truncated")
    llm_max_usd: float = Field(0.01, ge=0, description="Cost cap of the optional LLM extraction per capture")


DEFAULT_LLM_PRICES = (
    "claude-haiku-4-5=1/5, claude-haiku-4-5-20251001=1/5, claude-sonnet-4-5=3/15, "
    "claude-sonnet-4-6=3/15, claude-opus-4-5=5/25, claude-opus-4-6=5/25"
)


class LLMConfig(_Section):
    enabled: bool = Field(False, description="Allow LLM calls at all (they also need ANTHROPIC_API_KEY)")
    model: str = Field("claude-haiku-4-5-20251001", description="Model for transcript extraction")
    prices: str = Field(
        DEFAULT_LLM_PRICES,
        description="USD per million tokens, `model=input/output, ...`; a model without a price is never called",
    )
    base_url: str | None = Field(None, description="Messages API base URL (default: the SDK's, or ANTHROPIC_BASE_URL)")
    timeout_seconds: float = Field(30.0, gt=0)


class InjectConfig(_Section):
    budget_chars: int = Field(2000, ge=200, le=9000, description="additionalContext size budget per event")
    max_episodes: int = Field(3, ge=0, le=20)
    gate_weights: list[float] = Field(
        list(GATE_WEIGHTS),
        min_length=len(GATE_WEIGHTS),
        max_length=len(GATE_WEIGHTS),
        description="P(relevant) of a hit at UserPromptSubmit: logistic regression, intercept then the weights of "
        "inject/warm.py GATE_FEATURES; fitted by evals/fit_gate.py, refit on your own injections with "
        "`tempera learn refit-gate`",
    )
    gate_bar: float = Field(
        GATE_BAR, ge=0, le=1, description="A hit is injected only when its P(relevant) is at least this"
    )
    gate_top_share: float = Field(
        GATE_TOP_SHARE,
        ge=0,
        le=1,
        description="...and at least this share of the best hit's P: a far less likely item does not take room "
        "because room is left",
    )
    min_keyword_hits: int = Field(2, ge=1, le=50, description="Distinct query terms a keyword-only hit must contain")
    daemon_timeout_seconds: float = Field(
        2.0,
        ge=0.05,
        le=30.0,
        description="How long a hook waits for the warm daemon's answer (hooks/relay.py reads it)",
    )
    daemon_start_seconds: float = Field(
        3.0, ge=0.5, le=50.0, description="How long a hook that found no daemon waits for the one it starts to answer"
    )
    facts: bool = Field(
        True,
        description='Inject the fact graph\'s stances and entities that a prompt names ("Tempera facts"); '
        "false turns the channel off",
    )

    @model_validator(mode="before")
    @classmethod
    def _drop_retired(cls, data: Any) -> Any:
        """A config file may still set the fixed cosine floor `min_similarity`; the fitted bar decides instead."""
        return _without(data, RETIRED_INJECT_KEYS)

    @field_validator("gate_weights", mode="before")
    @classmethod
    def _weights_from_text(cls, value: Any) -> Any:
        """An env var (TEMPERA_INJECT__GATE_WEIGHTS) is text: "-4.4, 6.0, ..." with or without brackets."""
        return [x for x in value.strip().strip("[]").replace(",", " ").split()] if isinstance(value, str) else value


class DaemonConfig(_Section):
    transport: Literal["unix", "tcp"] = Field(
        "tcp" if sys.platform == "win32" else "unix",
        description="How hooks reach the daemon: a unix socket in the data dir (the default where there are unix "
        "sockets), or loopback TCP on a port the system picks, with a secret token in the owner-only data dir "
        "(the default on Windows); read at the daemon's start",
    )
    idle_exit_minutes: float = Field(60.0, ge=0, description="Exit after this long without a request (0 = never)")
    job_max_attempts: int = Field(5, ge=1)
    job_lease_seconds: float = Field(120.0, gt=0)
    watch_transcripts: bool = True
    watch_debounce_seconds: float = Field(5.0, ge=0)
    version_check_seconds: float = Field(
        30.0,
        gt=0,
        description="How often the daemon looks for a newly installed "
        "Tempera version (it re-executes itself when it finds one)",
    )


class DreamConfig(_Section):
    default_max_usd: float = Field(
        0.50,
        ge=0,
        description="USD cap of one dream cycle, charged from the API's real "
        "token usage at llm.prices; 0 runs every phase on its LLM-free fallback",
    )
    stable_threshold_days: int = 30
    triage_model: str = "claude-haiku-4-5-20251001"
    reflect_model: str = "claude-sonnet-4-6"
    patterns_lookback_days: int = 30
    patterns_min_evidence: int = 3
    patterns_cluster_threshold: float = Field(
        0.55,
        ge=0,
        le=1,
        description="Average-linkage cosine at which "
        "items form one theme (the original Tempera's 0.75 suits BGE; MiniLM's "
        "paraphrases score ~0.6)",
    )
    contradict_top_n: int = 50
    contradict_min_similarity: float = 0.6
    contradict_max_similarity: float = 0.95
    contradict_max_pairs: int = 30
    contradict_min_confidence: float = 0.7
    templates_min_evidence: int = 3
    templates_min_verification_weight: float = 0.30
    merge_match_window_hours: float = Field(
        48.0,
        gt=0,
        description="Without a recorded commit, a default-branch "
        "commit touching the episode's files this soon after it counts as "
        "its merge",
    )
    schedule: bool = Field(
        True,
        description="The daemon runs the cycle by itself: after idle_minutes without hook "
        "traffic once there is new work, and daily at nightly_time",
    )
    idle_minutes: float = Field(10.0, gt=0, description="Quiet minutes (no hook request, no capture) before a cycle")
    nightly_time: str = Field(
        "03:00",
        pattern=r"^$|^([01][0-9]|2[0-3]):[0-5][0-9]$",
        description="Local HH:MM of the daily cycle that runs even without new work ('' = off)",
    )
    reflect_lookback_days: int = Field(7, ge=1, description="Completed days (local time) the reflect phase looks at")
    reflect_min_episodes: int = Field(2, ge=1, description="Episodes a project needs on a day before it is triaged")
    reflect_min_score: float = Field(0.5, ge=0, le=1, description="Triage score that earns a day a written reflection")


class SelfImproveConfig(_Section):
    detect_corrections: bool = Field(
        True, description="Log corrections found in transcripts and the questions they show were not asked"
    )
    use_llm: bool = Field(True, description="Let the LLM (when a key is set) categorise, draft ask-backs and templates")
    llm_max_usd: float = Field(0.01, ge=0, description="Cost cap of the optional LLM calls per processed capture")
    calibration_min_declared: int = Field(5, ge=1, description="Declared successes before a calibration warning")
    calibration_warn_ratio: float = Field(0.5, ge=0, le=1, description="Warn when verified/declared is below this")
    brief_top_categories: int = Field(3, ge=1, le=20, description="Correction categories shown in a brief")
    brief_max_asks: int = Field(3, ge=0, le=20, description="Should-have-asked triggers shown in a brief")
    brief_min_rows: int = Field(
        3, ge=1, description="Corrections of one category (or asks of one question) before a brief shows it"
    )
    brief_min_sessions: int = Field(2, ge=1, description="Sessions those rows must come from")
    brief_window_days: int = Field(
        60, ge=1, description="Rows counted: those of this many days up to the project's latest session"
    )


class StorageConfig(_Section):
    max_age_days: int = 180
    min_utility_threshold: float = 0.05
    min_retrievals: int = 2
    consolidation_threshold: float = 0.85
    cluster_threshold: float = 0.85
    stale_age_days: int = 30
    stale_utility_threshold: float = 0.2


class TeamConfig(_Section):
    sync_seconds: float = Field(
        60.0,
        ge=0,
        description="How often the daemon pushes and pulls the team's shared "
        "projects when connected (tempera team connect; 0 = only by hand)",
    )


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")
    general: GeneralConfig = GeneralConfig()
    embedding: EmbeddingConfig = EmbeddingConfig()
    retrieval: RetrievalConfig = RetrievalConfig()
    bellman: BellmanConfig = BellmanConfig()
    capture: CaptureConfig = CaptureConfig()
    inject: InjectConfig = InjectConfig()
    daemon: DaemonConfig = DaemonConfig()
    dream: DreamConfig = DreamConfig()
    selfimprove: SelfImproveConfig = SelfImproveConfig()
    llm: LLMConfig = LLMConfig()
    storage: StorageConfig = StorageConfig()
    team: TeamConfig = TeamConfig()

    def model_cache_dir(self) -> Path:
        env = os.environ.get("FASTEMBED_CACHE_DIR")
        if env:
            return Path(env).expanduser()
        if self.embedding.cache_dir:
            return Path(self.embedding.cache_dir).expanduser()
        return paths.data_dir() / paths.MODELS_DIR


def load_config(path: Path | None = None, environ: dict[str, str] | None = None) -> Config:
    """Defaults, then the TOML file, then env overrides; a bad value names its key."""
    path = path or paths.config_path()
    data = settings.layered(settings.read_toml(path), os.environ if environ is None else environ, Config.model_fields)
    return _validated(data, f"from {path} or TEMPERA_* env")


def _validated(data: dict[str, Any], where_from: str) -> Config:
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InvalidInput(f"config {where}: {first['msg']} ({where_from})") from exc


def set_keys(path: Path, section: str, values: dict[str, float | list[float]]) -> None:
    """Set keys of one section of config.toml and keep the rest of the file as it was written (comments, order, the
    other keys): a key's line is replaced where it stands, a commented-out default (`# key = ...`, as `tempera
    init` writes them) becomes the key's line, else the key goes at the end of its section, and a missing section
    at the end of the file. The new text must parse, hold the values and validate before it replaces the file
    (atomically, its mode kept); otherwise InvalidInput, and the file stays as it was."""
    from tempera.core.atomic import write_atomic

    old = path.read_text(encoding="utf-8") if path.exists() else ""
    lines = old.splitlines()
    for name, value in values.items():
        lines = _set_line(lines, section, name, _toml_item(name, value))
    text = "\n".join(lines) + "\n"
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"{path}: could not set [{section}] {', '.join(values)} in its text ({exc})") from exc
    if any(doc.get(section, {}).get(name) != value for name, value in values.items()):
        raise InvalidInput(f"{path}: [{section}] is written in a form this edit does not handle; set it by hand")
    _validated(doc, f"as it would be written to {path}")
    write_atomic(path, text.encode("utf-8"), stat.S_IMODE(path.stat().st_mode) if path.exists() else None)


_SECTION = re.compile(r"^\s*\[\s*([A-Za-z0-9_-]+)\s*\]\s*(#.*)?$")


def _set_line(lines: list[str], section: str, name: str, item: str) -> list[str]:
    headers = {i: m.group(1) for i, line in enumerate(lines) if (m := _SECTION.match(line))}
    start = next((i for i, name_ in headers.items() if name_ == section), None)
    if start is None:
        return [*lines, *([""] if lines and lines[-1].strip() else []), f"[{section}]", item]
    end = next((i for i in headers if i > start), len(lines))
    key = re.compile(rf"^\s*{re.escape(name)}\s*=")
    for i in range(start + 1, end):
        if key.match(lines[i]):
            last, depth = i, lines[i].count("[") - lines[i].count("]")
            while depth > 0 and last + 1 < end:  # an array written over several lines
                last += 1
                depth += lines[last].count("[") - lines[last].count("]")
            return [*lines[:i], item, *lines[last + 1 :]]
    commented = re.compile(rf"^\s*#\s*{re.escape(name)}\s*=")
    for i in range(start + 1, end):
        if commented.match(lines[i]):
            return [*lines[:i], item, *lines[i + 1 :]]
    last = max(i for i in range(start, end) if lines[i].strip())
    return [*lines[: last + 1], item, *lines[last + 1 :]]


def to_toml(config: Config, *, commented: bool = False) -> str:
    """Render the config as TOML (flat sections of scalars and lists of numbers are all we have). `commented`
    writes each key as a comment: the file `tempera init` creates documents the defaults without pinning them, so
    a later release's defaults (the fitted gate weights, say) reach a user who never set a key."""
    lines: list[str] = []
    mark = "# " if commented else ""
    for section, model in config:
        lines.append(f"[{section}]")
        for name, value in model:
            if value is None:
                lines.append(f"# {name} = (unset)")
                continue
            lines.append(mark + _toml_item(name, value))
        lines.append("")
    return "\n".join(lines)


def _toml_item(name: str, value: object) -> str:
    if isinstance(value, bool):
        return f"{name} = {'true' if value else 'false'}"
    if isinstance(value, (int, float)):
        return f"{name} = {value}"
    if isinstance(value, list):
        return f"{name} = [{', '.join(map(str, value))}]"
    escaped = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'{name} = "{escaped}"'
