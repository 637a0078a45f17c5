"""The `inference-infra` command.

Each subcommand lives in its own module and imports what it needs inside the
command, so `inference-infra --help` and `size` start fast. Exit codes, for
every subcommand: 0 success, 1 policy gate failed, 2 bad input (one paragraph
on stderr, no traceback), 3 internal error (a bug: the traceback is printed).
"""

from __future__ import annotations

import importlib
import os
import sys

import click

from inference_infra.components.cli.text import fill
from inference_infra.components.errors import InputError

EXIT_OK, EXIT_POLICY, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3

# Subcommand modules; a module that is not there yet is skipped.
_COMMAND_MODULES = ("plan", "catalog", "size", "monitoring", "models", "policy_pack", "simulate")


@click.group(
    name="inference-infra",
    help="Offline plans, capacity sizing and monitoring config for AI inference infrastructure.",
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(None, "--version", "-V", package_name="inference-infra", message="%(prog)s %(version)s")
def app() -> None:
    pass


def _register() -> None:
    for name in _COMMAND_MODULES:
        try:
            importlib.import_module(f"inference_infra.components.cli.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"inference_infra.components.cli.{name}":
                raise


def _paragraph(message: str) -> str:
    text = " ".join(str(message).split())
    return fill(f"inference-infra: {text}") + "\n"


def main(argv: list[str] | None = None) -> int:
    _register()
    try:
        result = app.main(args=argv, prog_name="inference-infra", standalone_mode=False)
    except InputError as e:
        sys.stderr.write(_paragraph(str(e)))
        return getattr(e, "exit_code", EXIT_INPUT)  # 4: a data source had no offline answer (plan)
    except click.UsageError as e:
        hint = f" (see '{e.ctx.command_path} --help')" if e.ctx else ""
        sys.stderr.write(_paragraph(f"{e.format_message()}{hint}"))
        return EXIT_INPUT
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.Abort:
        sys.stderr.write("inference-infra: aborted\n")
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception:
        if os.environ.get("INFERENCE_INFRA_DEBUG"):
            raise
        import traceback

        sys.stderr.write("inference-infra: internal error (a bug; please report it with this traceback):\n")
        traceback.print_exc()
        return EXIT_INTERNAL
    return result if isinstance(result, int) else EXIT_OK


def _close_idle_event_loops() -> None:
    """Close the event loops Pulumi's runtime left open in its worker threads (one per thread that
    registered a resource), before the interpreter tears down: a loop collected during shutdown,
    after its self-pipe socket, prints "Exception ignored in BaseEventLoop.__del__ ... Invalid file
    descriptor: -1" on stderr in a fraction of runs. The process is ending, so any loop not
    running is done with."""
    import asyncio
    import contextlib
    import gc

    for obj in gc.get_objects():
        if isinstance(obj, asyncio.AbstractEventLoop) and not obj.is_running() and not obj.is_closed():
            with contextlib.suppress(Exception):  # a half-torn-down loop: nothing left to release
                obj.close()


def run() -> None:
    """Console-script entry point."""
    code = main()
    sys.stdout.flush()
    _close_idle_event_loops()
    sys.exit(code)
