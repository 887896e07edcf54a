"""`vox serve [MODEL_DIR]`: serve an exported model over an OpenAI-compatible HTTP API.

Without MODEL_DIR it serves the pipeline's latest export that passed its eval gate. Exit status:
2 usage error (no export to serve, a MODEL_DIR or ``--adapter`` that is not a servable model
directory, an unknown or absent ``--device``, ``--threads`` above the core count, a ``--host``
that is not an address of this machine), 1 runtime failure (port in use, weights that do not
load, the server failing); either way one line on stderr, never a traceback. Only typer and the
standard library are imported here; torch, transformers and FastAPI load when it runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def resolve_model_dir(model_dir: Path | None) -> Path:
    """The directory to serve: ``model_dir`` if given, else the latest passing export.

    Raises:
        UsageError: no directory given and no export passed its eval gate (the message says
            where exports are looked for and how to make one).
    """
    from serving.errors import UsageError

    if model_dir is not None:
        return model_dir
    from pipeline.paths import exports_dir, latest_export

    latest = latest_export(require_passed=True)
    if latest is not None:
        return latest
    failed = latest_export(require_passed=False)
    if failed is not None:
        reason = f"the latest export {failed} did not pass its eval gate"
    else:
        reason = f"there is no exported model under {exports_dir()}"
    raise UsageError(f"{reason}; pass MODEL_DIR explicitly or run the pipeline (`make run`) to export one")


def check_model_dir(path: Path, adapter: Path | None) -> None:
    """Check that ``path`` (and ``adapter``) name a servable model, before anything is loaded.

    Raises:
        UsageError: a directory is missing, or lacks config, weights, tokenizer or chat template,
            or holds malformed JSON; the message names the path and the file.
    """
    from serving.errors import ModelLoadError, UsageError
    from serving.model_dir import inspect_model_dir

    try:
        inspect_model_dir(path, adapter)
    except ModelLoadError as exc:
        raise UsageError(str(exc)) from exc


def _check_device(device: str | None, *, present: bool) -> None:
    """Refuse an unknown ``--device`` name (torch-free, so as fast as any usage mistake), or with
    ``present`` one this machine lacks (imports torch), before the port is bound and weights load.

    Raises:
        UsageError: :func:`pipeline.devices.device_kind`'s or :func:`pipeline.decoding.pick_device`'s message.
    """
    from pipeline.devices import device_kind
    from pipeline.errors import DecodingError
    from serving.errors import UsageError

    try:
        device_kind(device)
        if present:
            from pipeline.decoding import pick_device

            pick_device(device)
    except DecodingError as exc:
        raise UsageError(str(exc)) from exc


def check_threads(threads: int) -> None:
    """Refuse a ``--threads`` count torch cannot use well, before anything is read: more threads
    than cores only time-slice one another (and a huge count crashes torch's thread pool, or
    overflows ``torch.set_num_threads``'s C int, after the server said it was ready).

    Raises:
        UsageError: ``threads`` is negative or above :func:`pipeline.devices.usable_cores`.
    """
    from pipeline.devices import usable_cores
    from serving.errors import UsageError

    cores = usable_cores()
    if threads < 0 or threads > cores:
        raise UsageError(f"--threads {threads}: give 0 (automatic) or a count from 1 to {cores} "
                         f"(the cores this process may use)")


def serve(
    model_dir: Annotated[
        Path | None,
        typer.Argument(help="Exported model dir (default: the latest export that passed its eval gate)."),
    ] = None,
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.", min=0, max=65535)] = 8000,
    adapter: Annotated[Path | None, typer.Option(help="PEFT adapter dir served on top of MODEL_DIR.")] = None,
    device: Annotated[str | None, typer.Option(help="auto, cpu, cuda, cuda:N or mps (default: auto).")] = None,
    max_tokens: Annotated[int, typer.Option(help="Default completion cap when a request sets none.", min=1)] = 512,
    # default: serving.engine.MAX_CHOICES (not imported here: it loads torch)
    max_n: Annotated[int, typer.Option(
        help="Most choices (OpenAI n) per request, generated in one batch; more is a 400.", min=1, max=256)] = 16,
    threads: Annotated[int, typer.Option(
        help="Torch threads, at most the cores this process may use; 0: automatic (on a CPU, 1 for a model "
             "under 50M parameters, else every core).", min=0)] = 0,
    mask_worker: Annotated[bool | None, typer.Option(
        "--mask-worker/--no-mask-worker",
        help="Build the Vox masks in a second process, during the forward pass (default: when a core is "
             "left beside the torch threads).")] = None,
) -> None:
    """Serve an exported MENS model: /v1/models, /v1/chat/completions (streaming too), /health.

    Exit 2 on a usage error (no export to serve, a MODEL_DIR or --adapter that is not a model directory, an unknown --device, a --host not of this machine); 1 on a runtime failure (port in use, weights that do not load).

    On another port than 8000, point clients at it: VOX_LOCAL_ENDPOINTS=http://127.0.0.1:PORT/v1, then `vox model discover --force`.
    """  # noqa: E501 - typer shows each docstring line as a line of --help
    from serving.errors import ServingError, UsageError

    try:
        _check_device(device, present=False)  # a misspelt flag is refused before anything is read
        check_threads(threads)
        path = resolve_model_dir(model_dir)
        check_model_dir(path, adapter)
        _check_device(device, present=True)
        from serving.engine import Engine
        from serving.server import bind_socket, serve as run_server

        sock = bind_socket(host, port)  # fail fast on a busy port, before loading weights
        try:
            typer.echo(f"loading {path} ...", err=True)
            engine = Engine.load(path, adapter, device=device)  # UsageError for a bad --device
        except BaseException:
            sock.close()
            raise
        import torch  # loaded with the model already

        from serving.model_load import serving_threads

        count = serving_threads(engine.model, engine.device, threads)
        if count is not None:
            torch.set_num_threads(count)
        cache = "kv-cache" if engine.use_cache else "full-sequence forward"
        on_cpu = str(engine.device).startswith("cpu")
        if on_cpu:
            used = torch.get_num_threads()
            cache = f"{used} thread{'s' if used > 1 else ''}, {cache}"
        busy = torch.get_num_threads() if on_cpu else 1
        if engine.grammar is None:
            pass  # unconstrained (warned at load): no masks to build anywhere
        elif mask_worker if mask_worker is not None else core_to_spare(busy):
            if not core_to_spare(busy):
                typer.echo(f"warning: --mask-worker with no core beside the {busy} the model uses: the worker "
                           "and the forward pass will take turns (slower than masks in process)", err=True)
            cache = f"{cache}, {engine.start_mask_worker()}"
        else:
            cache = f"{cache}, Vox masks in process"
        if max_tokens >= engine.max_context:
            typer.echo(f"warning: --max-tokens {max_tokens} is not below the model's context of {engine.max_context} "
                       "tokens: a request without max_tokens gets what room its prompt leaves", err=True)
        port = sock.getsockname()[1]  # the real one when --port 0
        url_host = f"[{host}]" if ":" in host else host
        typer.echo(
            f"serving {engine.model_id!r} on http://{url_host}:{port}/v1 ({engine.device}, {cache}); Ctrl-C to stop",
            err=True,
        )
        try:
            run_server(engine, host, port, sock=sock, default_max_tokens=max_tokens, max_n=max_n)
        finally:
            engine.close()
    except ServingError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2 if isinstance(exc, UsageError) else 1) from None


def core_to_spare(busy: int) -> bool:
    """Whether this process may use a core beyond the ``busy`` ones the model's forward pass keeps
    busy (torch threads on a CPU, one feeding a GPU): the mask worker's default."""
    from pipeline.devices import usable_cores

    return usable_cores() > busy


def register(app: typer.Typer) -> None:
    """Attach ``serve`` to the `vox` app."""
    app.command("serve")(serve)
