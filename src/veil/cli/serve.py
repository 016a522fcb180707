"""``veil serve``: the workbench in the browser (veil.workbench), for the data steward."""
from __future__ import annotations

import logging
import signal
import sys
from pathlib import Path

import typer

from veil.cli.console import fails_cleanly
from veil.errors import ParameterError


@fails_cleanly
def serve_command(
    port: int = typer.Option(8765, "--port", help="The port to listen on (0: any free port)."),
    data_dir: Path = typer.Option(Path("veil-workbench"), "--data-dir",
                                  help="The folder of the projects and their ledger (made if missing)."),
    host: str = typer.Option("127.0.0.1", "--host", help="The address to listen on (default: this machine only)."),
    allow_remote: bool = typer.Option(False, "--allow-remote",
                                      help="Allow a --host that other machines can reach (the access token still "
                                           "guards every request, but travels unencrypted)."),
    max_upload: int = typer.Option(200, "--max-upload", help="The largest table an upload may hold, in MiB."),
) -> None:
    """Start the workbench: a local web application to check, anonymize, compare, attack and publish.

    It listens on 127.0.0.1 unless --host and --allow-remote say otherwise, and prints the address
    to open, which carries a random access token that every request must present. Projects live
    as files in --data-dir: each has its table, the configuration veil anonymize reads and its
    releases. Stop it with Ctrl-C; a run it was doing stops and leaves no release.
    """
    try:
        import waitress

        from veil.workbench import create_app
        from veil.workbench.security import check_bind
    except ImportError:
        raise ParameterError("the workbench needs Flask and waitress; install them with pip install "
                             "'veil[serve]'.") from None
    check_bind(host, allow_remote=allow_remote)
    if not 0 <= port <= 65535:
        raise ParameterError("give --port a number from 0 to 65535.")
    if max_upload < 1:
        raise ParameterError("give --max-upload a whole number of MiB, at least 1.")
    if data_dir.exists() and not data_dir.is_dir():
        raise ParameterError(f"{str(data_dir)!r} is a file; give --data-dir a folder.")
    # waitress speaks through logging (its queue's depth when every thread is busy, a client that
    # went away): the server's own business, never the user's terminal
    waitress_log = logging.getLogger("waitress")
    waitress_log.addHandler(logging.NullHandler())
    waitress_log.propagate = False
    # Bound to every interface, the server is reached by names it cannot know: the token guards it.
    everywhere = host in ("0.0.0.0", "::", "")
    app = create_app(data_dir, max_upload=max_upload * 2 ** 20, hosts=("*",) if everywhere else (host,))
    try:
        server = waitress.create_server(app, host=host, port=port, threads=8,
                                        max_request_body_size=max_upload * 2 ** 20 + 2 ** 20, ident="veil")
    except OSError as error:
        raise ParameterError(f"cannot listen on {host}:{port} ({error.strerror or error}); choose another --port.") \
            from None
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{server.effective_port}/?token={app.config['VEIL_TOKEN']}"
    print(f"veil workbench on {data_dir.resolve()}\nopen {url}\nstop with Ctrl-C", flush=True)

    def stop(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        app.extensions["veil_jobs"].stop_all()
        server.close()
    print("veil workbench stopped", file=sys.stderr, flush=True)
