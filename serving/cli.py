"""The ``vox`` command: a thin shell over ``serving.commands.*`` (one module per command).

Command modules import only typer at load time; heavy libraries are imported inside the
command bodies so that ``vox check`` starts fast (no torch, transformers, Dagster, LiteLLM).
"""

from __future__ import annotations

import typer

from serving.commands import chat as _chat, check as _check, model as _model, run as _run, serve as _serve

app = typer.Typer(
    name="vox",
    help="Vox toolchain: check programs, chat with routed models, serve exported MENS models.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
_check.register(app)
_run.register(app)
_chat.register(app)
_serve.register(app)
_model.register(app)


def main() -> None:
    """Console-script entry point (``vox``).

    Each command reports its own errors; a ``ServingError`` that escapes one anyway (a user's
    environment or input, never a bug of ours by contract: see serving/errors.py) still ends as one
    ``error:`` line and exit status 1, not a traceback.
    """
    from serving.errors import ServingError

    try:
        app()
    except ServingError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
