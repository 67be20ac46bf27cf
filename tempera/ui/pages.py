"""The pages (GET only; nothing here changes memory): timeline, search, episode, injection log, fact graph,
self-improvement and dream logs, plots, the forget confirmation and the export download."""

from __future__ import annotations

import io
from datetime import datetime, timezone
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from tempera.core import forget as forgetting
from tempera.core.retrieve import MODES, retrieve
from tempera.facts.memory_export import export
from tempera.ui import episode_details, facts_view, injection_log, plots, reviews, timeline
from tempera.ui.app import render, state

SEARCH_LIMIT = 10


def _project_choice(request: Request, projects: list[dict[str, Any]], *, default_first: bool) -> str | None:
    """The `project` query parameter when it names a known project; else the most recent one, or None (all)."""
    wanted = request.query_params.get("project", "")
    known = {p["id"] for p in projects}
    if wanted in known:
        return wanted
    return projects[0]["id"] if default_first and projects else None


async def home(request: Request) -> Response:
    return RedirectResponse("/timeline", status_code=303)


async def timeline_page(request: Request) -> Response:
    db = state(request).memory.db
    projects = timeline.projects(db)
    current = _project_choice(request, projects, default_first=True)
    author = request.query_params.get("author") or None
    sessions = timeline.sessions(db, current, author=author) if current else []
    return render(
        request,
        "timeline.html",
        {
            "projects": projects,
            "current": current,
            "sessions": sessions,
            "authors": timeline.authors(db, current) if current else [],
            "author": author,
            "own": timeline.OWN,
            "chart": plots.as_json(timeline.chart(sessions)),
        },
    )


def _hit_row(hit: Any) -> dict[str, Any]:
    return {
        **hit.as_dict(),
        "keyword_rank": hit.keyword_rank,
        "vector_rank": hit.vector_rank,
        "names_rank": hit.names_rank,
        "matched_terms": hit.matched_terms,
        "verification_weight": hit.episode.outcome.verification.weight,
    }


async def search_page(request: Request) -> Response:
    mem = state(request).memory
    params = request.query_params
    projects = timeline.projects(mem.db)
    current = _project_choice(request, projects, default_first=True)
    query = params.get("q", "").strip()
    mode = params.get("mode") if params.get("mode") in MODES else mem.config.retrieval.mode
    cross = params.get("scope") != "project"
    hits = []
    if query and current:
        hits = [
            _hit_row(h)
            for h in retrieve(
                mem.store,
                query,
                project_id=current,
                cfg=mem.config.retrieval,
                limit=SEARCH_LIMIT,
                mode=mode,
                cross_project=cross,
            )
        ]
    return render(
        request,
        "search.html",
        {
            "projects": projects,
            "current": current,
            "q": query,
            "mode": mode,
            "modes": MODES,
            "cross": cross,
            "hits": hits,
            "vectors": mem.store.vectors.status().state,
        },
    )


async def episode_page(request: Request) -> Response:
    mem = state(request).memory
    return render(request, "episode.html", episode_details.details(mem, request.path_params["episode_id"]))


async def injections_page(request: Request) -> Response:
    db = state(request).memory.db
    projects = timeline.projects(db)
    current = _project_choice(request, projects, default_first=False)
    session = request.query_params.get("session") or None
    return render(
        request,
        "injections.html",
        {
            "projects": projects,
            "current": current,
            "session": session,
            "prompts": injection_log.prompts(db, project_id=current, session_id=session),
        },
    )


async def facts_page(request: Request) -> Response:
    params = request.query_params
    data = facts_view.fact_page(
        state(request).memory, params.get("entity", ""), params.get("as_of", ""), params.get("valid_at", "")
    )
    return render(request, "facts.html", data)


async def selfimprove_page(request: Request) -> Response:
    mem = state(request).memory
    projects = timeline.projects(mem.db)
    current = _project_choice(request, projects, default_first=False)
    return render(
        request, "selfimprove.html", {"projects": projects, "current": current, **reviews.selfimprove(mem, current)}
    )


async def dream_page(request: Request) -> Response:
    mem = state(request).memory
    projects = timeline.projects(mem.db)
    current = _project_choice(request, projects, default_first=False)
    return render(request, "dream.html", {"projects": projects, "current": current, **reviews.dream(mem, current)})


async def plots_page(request: Request) -> Response:
    data = plots.all_plots(state(request).memory)
    return render(
        request,
        "plots.html",
        {
            "plots": plots.as_json(data),
            "latency_recorded": data["latency"]["recorded"],
            "latency_key": plots.LATENCY_KEY,
        },
    )


async def forget_page(request: Request) -> Response:
    """The dry run: what would go, and the button that makes it go."""
    mem = state(request).memory
    params = request.query_params
    sel = forgetting.selector(mem.store, params.get("kind", ""), params.get("value", ""), params.get("project") or None)
    return render(request, "forget.html", {"report": forgetting.plan(mem.db, sel).as_dict(), "selector": sel})


async def export_download(request: Request) -> Response:
    mem = state(request).memory
    fmt = request.query_params.get("format", "jsonl")
    out = io.StringIO()
    export(mem, out, fmt, project=request.query_params.get("project") or None)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    ext = "jsonl" if fmt == "jsonl" else "md"
    return Response(
        out.getvalue(),
        media_type="application/x-ndjson" if ext == "jsonl" else "text/markdown",
        headers={"content-disposition": f'attachment; filename="tempera-export-{stamp}.{ext}"'},
    )


ROUTES = [
    Route("/", home),
    Route("/timeline", timeline_page),
    Route("/search", search_page),
    Route("/episode/{episode_id}", episode_page),
    Route("/injections", injections_page),
    Route("/facts", facts_page),
    Route("/selfimprove", selfimprove_page),
    Route("/dream", dream_page),
    Route("/plots", plots_page),
    Route("/forget", forget_page),
    Route("/export", export_download),
]
