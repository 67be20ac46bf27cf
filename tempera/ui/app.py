"""The Starlette application: routes, templates (autoescaped Jinja2), packaged static files, and the guard.

Handlers are `async` and call the memory engine directly, so every database use happens on the event loop's
one thread: the single SQLite connection is never shared between threads, and a local, single-user browser
gains nothing from parallel requests.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from tempera.core.errors import AmbiguousId, InvalidInput, NotFound, TemperaError
from tempera.core.memory import Memory
from tempera.ui.security import Guard, LaunchSecrets

HERE = Path(__file__).parent


@dataclass
class UiState:
    memory: Memory
    launch: LaunchSecrets
    templates: Jinja2Templates


def state(request: Request) -> UiState:
    return request.app.state.ui  # type: ignore[no-any-return]


def render(request: Request, name: str, context: dict[str, Any], status_code: int = 200) -> Response:
    ui = state(request)
    return ui.templates.TemplateResponse(request, name, {"nav": name, **context}, status_code=status_code)


async def _domain_error(request: Request, exc: Exception) -> Response:
    status = 404 if isinstance(exc, NotFound) else 400 if isinstance(exc, (InvalidInput, AmbiguousId)) else 500
    return render(request, "error.html", {"message": str(exc)}, status_code=status)


def create_app(memory: Memory, launch: LaunchSecrets) -> Starlette:
    from tempera.ui import actions, pages

    templates = Jinja2Templates(directory=str(HERE / "templates"))
    templates.env.globals["csrf"] = launch.csrf  # a global, so the imported form macros see it too
    app = Starlette(
        routes=[
            *pages.ROUTES,
            *actions.ROUTES,
            Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
        ],
        middleware=[Middleware(Guard, launch=launch)],
        exception_handlers={TemperaError: _domain_error, **actions.EXCEPTION_HANDLERS},
    )
    app.state.ui = UiState(memory, launch, templates)
    return app
