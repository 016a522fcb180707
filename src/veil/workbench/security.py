"""The workbench's guards: the access token, the CSRF token, the bind address and upload names.

The server is for one curator on one machine. It binds to the loopback interface unless told
otherwise, and every request must carry the access token printed when it starts: once in the
link's query (``?token=``), which the server trades for an HttpOnly, SameSite=Strict cookie and
removes from the address bar. Every form carries a second random token (synchronizer-token
pattern, OWASP's CSRF Prevention Cheat Sheet), checked on every request that changes state.
"""
from __future__ import annotations

import hmac
import ipaddress
import re
import secrets
import unicodedata

from veil.errors import ParameterError

TOKEN_COOKIE = "veil_workbench"
CSRF_FIELD = "csrf_token"
# What a project's name may hold: it becomes a folder of the data folder.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def new_token() -> str:
    """A random access token (32 bytes from the operating system's secure source)."""
    return secrets.token_urlsafe(32)


def same(given: str | None, expected: str) -> bool:
    """Whether ``given`` is ``expected``, compared in constant time (a missing value is not)."""
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


def is_local(host: str) -> bool:
    """Whether ``host`` names the loopback interface (127.0.0.0/8, ::1 or ``localhost``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, *, allow_remote: bool) -> None:
    """Refuse a non-local bind address unless ``allow_remote`` says so explicitly.

    Raises:
        ParameterError: ``host`` is not a loopback address and ``allow_remote`` is false.
    """
    if not is_local(host) and not allow_remote:
        raise ParameterError(f"the workbench binds to 127.0.0.1 only; to serve on {host!r}, which other machines "
                             "can reach, add --allow-remote.")


def project_name(name: str) -> str:
    """A project's folder name: letters, digits, '.', '_' and '-', at most 64, not starting with '.'.

    Raises:
        ParameterError: the name holds anything else (a path separator, '..', a control character).
    """
    name = unicodedata.normalize("NFC", name.strip())
    if not _NAME.fullmatch(name) or name in {".", ".."}:
        raise ParameterError("name the project with letters, digits, '.', '_' and '-' only (at most 64, starting "
                             "with a letter or digit).")
    return name
