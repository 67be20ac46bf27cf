"""The state changes (POST only, each behind the guard's same-origin check and the form's CSRF token): feedback,
validity scope, forget, pause and resume. Each does what its CLI command does, through the same functions."""

from __future__ import annotations

from urllib.parse import quote

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from tempera.core import forget as forgetting
from tempera.core import pause as pausing
from tempera.team.local import forget as forget_shared
from tempera.transcripts.resume import resume_project
from tempera.ui.app import render, state
from tempera.ui.security import same


class CsrfRefused(Exception):
    """A state change whose form lacks this launch's CSRF token."""


async def checked_form(request: Request) -> FormData:
    form = await request.form()
    token = form.get("csrf")
    if not isinstance(token, str) or not same(token, state(request).launch.csrf):
        raise CsrfRefused()
    return form


async def _csrf_refused(request: Request, exc: Exception) -> Response:
    return PlainTextResponse("403 Forbidden: missing or wrong CSRF token\n", status_code=403)


def _back_to_episode(episode_id: str) -> RedirectResponse:
    return RedirectResponse(f"/episode/{quote(episode_id)}", status_code=303)


async def feedback(request: Request) -> Response:
    form = await checked_form(request)
    episode_id = request.path_params["episode_id"]
    state(request).memory.feedback(str(form.get("signal", "")), [episode_id], evidence={"via": "ui"})
    return _back_to_episode(episode_id)


async def scope(request: Request) -> Response:
    form = await checked_form(request)
    episode = state(request).memory.store.set_scope(request.path_params["episode_id"], str(form.get("scope", "")))
    return _back_to_episode(episode.id)


async def forget(request: Request) -> Response:
    form = await checked_form(request)
    mem = state(request).memory
    sel = forgetting.selector(
        mem.store, str(form.get("kind", "")), str(form.get("value", "")), str(form.get("project", "")) or None
    )
    report = forget_shared(mem.db, sel)
    return render(request, "forgotten.html", {"report": report.as_dict()})


async def pause(request: Request) -> Response:
    await checked_form(request)
    ref, _ = pausing.pause_project(state(request).memory.store, request.path_params["project_id"])
    return RedirectResponse(f"/timeline?project={quote(ref.id)}", status_code=303)


async def resume(request: Request) -> Response:
    await checked_form(request)
    ref, _, _ = resume_project(state(request).memory, request.path_params["project_id"])
    return RedirectResponse(f"/timeline?project={quote(ref.id)}", status_code=303)


ROUTES = [
    Route("/episode/{episode_id}/feedback", feedback, methods=["POST"]),
    Route("/episode/{episode_id}/scope", scope, methods=["POST"]),
    Route("/forget", forget, methods=["POST"]),
    Route("/projects/{project_id}/pause", pause, methods=["POST"]),
    Route("/projects/{project_id}/resume", resume, methods=["POST"]),
]
EXCEPTION_HANDLERS = {CsrfRefused: _csrf_refused}
