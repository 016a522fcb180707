"""The workbench's web application (Flask): its pages, guards and error pages.

:func:`create_app` builds it; ``veil serve`` (veil.cli.serve) runs it under waitress. Each page
is a module of ``veil.workbench.pages`` with a Flask blueprint ``bp``, listed in :data:`PAGES`.
"""
from __future__ import annotations

import importlib
import secrets
from pathlib import Path
from urllib.parse import urlencode

from flask import Flask, Response, g, redirect, render_template, request
from markupsafe import Markup, escape
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from veil.errors import VeilError
from veil.workbench.jobs import Jobs
from veil.workbench.projects import NotFound, Workspace
from veil.workbench.security import CSRF_FIELD, TOKEN_COOKIE, is_local, new_token, same

# the page modules, each with a blueprint ``bp``
PAGES = (
    "veil.workbench.pages.projects",
    "veil.workbench.pages.runs",
    "veil.workbench.pages.columns",
    "veil.workbench.pages.risk",
    "veil.workbench.pages.anonymize",
    "veil.workbench.pages.releases",
    "veil.workbench.pages.publish",
    "veil.workbench.pages.dp",
)
# a project's tabs, in the steward's order: (label, endpoint taking ``name``); a tab whose page
# is not registered is left out
PROJECT_TABS = (
    ("Table", "projects.project"),
    ("Columns", "columns.page"),
    ("Risk", "risk.page"),
    ("Anonymize", "anonymize.page"),
    ("Releases", "releases.page"),
    ("Publish", "publish.page"),
    ("DP queries", "dp.page"),
)
DEFAULT_MAX_UPLOAD = 200 * 2 ** 20
# Nothing is loaded from anywhere but this server; no inline script or style (figures are images).
CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; object-src 'none'; "
       "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
_CHANGES_STATE = ("POST", "PUT", "PATCH", "DELETE")


class _Flask(Flask):
    def select_jinja_autoescape(self, filename: str) -> bool:
        return True   # every template is HTML: escape every value, whatever the file is called


def create_app(data_dir: str | Path, *, token: str | None = None, max_upload: int = DEFAULT_MAX_UPLOAD,
               hosts: tuple[str, ...] = ()) -> Flask:
    """The workbench over the data folder ``data_dir``.

    Args:
        data_dir: the folder that holds the projects and the ledger (made if missing).
        token: the access token every request must carry (default: a new random one, in
            ``app.config["VEIL_TOKEN"]``).
        max_upload: the largest request body accepted, in bytes (a larger upload is refused).
        hosts: host names besides the loopback ones that requests may name in their Host header
            (the address the server was explicitly bound to); ``"*"`` accepts any (a server bound
            to every interface, which other machines reach by names it cannot know).
    """
    app = _Flask(__name__, template_folder="templates", static_folder="static")
    workspace = Workspace(data_dir)
    workspace.sweep()
    jobs = Jobs()
    jobs.recover(workspace.projects())
    app.config.update(VEIL_TOKEN=token or new_token(), VEIL_CSRF=secrets.token_urlsafe(32),
                      MAX_CONTENT_LENGTH=max_upload, VEIL_HOSTS=tuple(hosts))
    app.extensions["veil_workspace"] = workspace
    app.extensions["veil_jobs"] = jobs
    for name in PAGES:
        app.register_blueprint(importlib.import_module(name).bp)
    app.jinja_env.globals.update(csrf_field=csrf_field, csrf_token=lambda: app.config["VEIL_CSRF"],
                                 project_tabs=lambda: [t for t in PROJECT_TABS if t[1] in app.view_functions])
    app.before_request(_guard)
    app.after_request(_headers)
    app.register_error_handler(NotFound, lambda e: (render_template("error.html.j2", message=str(e)), 404))
    app.register_error_handler(RequestEntityTooLarge, _too_large)
    app.register_error_handler(HTTPException, _http_error)
    return app


def workspace() -> Workspace:
    """The data folder of the current request's application."""
    from flask import current_app
    return current_app.extensions["veil_workspace"]


def jobs() -> Jobs:
    """The worker processes of the current request's application."""
    from flask import current_app
    return current_app.extensions["veil_jobs"]


def csrf_field() -> Markup:
    """The hidden field every form of the workbench carries."""
    from flask import current_app
    return Markup(f'<input type="hidden" name="{CSRF_FIELD}" value="{escape(current_app.config["VEIL_CSRF"])}">')


_TOO_LARGE: dict = {}


def on_too_large(endpoint: str):
    """Register the function that answers an upload over the limit at ``endpoint`` (called with
    the message; it renders the form with the message next to its field, instead of a bare 413
    page). A decorator, used where the page module defines its views."""
    def register(function):
        _TOO_LARGE[endpoint] = function
        return function
    return register


def _refuse(message: str, status: int = 403, *, signed_in: bool = True) -> Response:
    """The error page; for a request without the access token, a page that loads nothing else."""
    template = "error.html.j2" if signed_in else "refused.html.j2"
    return Response(render_template(template, message=message), status=status)


def _guard():
    from flask import current_app
    config = current_app.config
    host = (request.host or "").rsplit(":", 1)[0] if not (request.host or "").endswith("]") else request.host
    if not (is_local(host.strip("[]")) or host in config["VEIL_HOSTS"] or "*" in config["VEIL_HOSTS"]):
        return _refuse("this workbench answers only requests addressed to the machine it runs on.", 400,
                       signed_in=False)
    given = request.args.get("token")
    if given is not None and request.method == "GET" and same(given, config["VEIL_TOKEN"]):
        rest = {k: v for k, v in request.args.items(multi=True) if k != "token"}
        response = redirect(request.path + (f"?{urlencode(rest)}" if rest else ""), code=303)
        response.set_cookie(TOKEN_COOKIE, config["VEIL_TOKEN"], httponly=True, samesite="Strict", path="/")
        return response
    if not same(request.cookies.get(TOKEN_COOKIE), config["VEIL_TOKEN"]):
        return _refuse("open the address that veil serve printed when it started: it carries the access token.",
                       signed_in=False)
    if request.method in _CHANGES_STATE:
        try:
            sent = request.form.get(CSRF_FIELD) or request.headers.get("X-CSRF-Token")
        except RequestEntityTooLarge:
            g.too_large = True
            raise
        if not same(sent, config["VEIL_CSRF"]):
            return _refuse("this form did not come from this workbench (or the server restarted since the page was "
                           "loaded); reload the page and submit it again.")
    return None


def _headers(response: Response) -> Response:
    response.headers.setdefault("Content-Security-Policy", CSP)
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers.setdefault("X-Frame-Options", "DENY")
    response.headers.setdefault("Cache-Control", "no-store")
    return response


def _too_large(error):
    from flask import current_app
    view = _TOO_LARGE.get(request.endpoint)
    limit = current_app.config["MAX_CONTENT_LENGTH"]
    message = f"the file is larger than this workbench's upload limit ({limit / 2 ** 20:.0f} MiB); upload a " \
              "smaller table, or start veil serve with a larger --max-upload."
    if view is not None:
        return view(message), 413
    return _refuse(message, 413)


def _http_error(error: HTTPException):
    return _refuse(error.description or error.name, error.code or 500)


def veil_error_message(error: VeilError) -> str:
    """The one sentence a page shows for a VeilError."""
    return str(error)
