"""`vox chat [PROMPT]`: one-shot or interactive chat, routed by mode, with Vox verification.

A shell around :func:`serving.chat.run_chat`: it loads the catalog, resolves keys, builds the
routed sender and maps errors to exit codes: one-shot 0 ok, 1 no model answered / verify FAIL /
budget spent, 2 usage error; an interactive session 0 when the user ends it (``/exit``, Ctrl-D),
whatever its turns' verdicts, 1 when the spent budget ends it. Progress lines (``[vox] sampling 8
candidates from ...``) go to stderr when it is a terminal (not with ``--quiet``); stdout is the
transcript alone, so that it can be piped. Only typer and the standard library are imported at
load time. LiteLLM (≈5 s to import) is needed only to call a model: ``--dry-run`` never imports
it, and otherwise it starts importing in a background thread once the catalog shows a model that
could be called (a provider key, or a local model), overlapping the user's typing in an
interactive session; with no model at all the "no model can serve" error comes without it.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from serving.chat import ChatResult

MODEL_HELP = ("Mode: free | auto | efficient | balanced | genius (aliases auto-free, fast, standard, "
              "sota, frontier, max), or a concrete model id such as openai/gpt-5 or vox-mens-tiny.")


def chat(
    prompt: Annotated[str | None, typer.Argument(help="The request (omit for an interactive session).")] = None,
    model: Annotated[str, typer.Option("--model", "-m", help=MODEL_HELP)] = "auto",
    system: Annotated[str | None, typer.Option(help="System prompt (replaces the Vox SSOT prompt).")] = None,
    explain: Annotated[bool, typer.Option(help="Print routing decisions and best-of-n tallies.")] = False,
    dry_run: Annotated[bool, typer.Option(help="Only route (implies --explain); call no model.")] = False,
    local_only: Annotated[bool, typer.Option(help="Use local models only.")] = False,
    max_cost: Annotated[float | None, typer.Option(help="Spend cap for this chat, in USD.", min=0)] = None,
    max_repairs: Annotated[int, typer.Option(help="Repair rounds for Vox code.", min=0, max=10)] = 2,
    cascade: Annotated[int, typer.Option("--cascade", "-k", help="Models in the cascade.", min=1, max=10)] = 4,
    vox: Annotated[bool | None, typer.Option("--vox/--no-vox", help="Force Vox-code checking on/off.")] = None,
    key: Annotated[list[str] | None, typer.Option(help="PROVIDER=KEY (beats config, env, keyring).")] = None,
    max_tokens: Annotated[int | None, typer.Option(help="Answer length cap (tokens; default 1024).", min=1)] = None,
    candidates: Annotated[int | None, typer.Option(
        help="Vox answers sampled per request, first answer and repairs alike; the first that compiles "
             "answers (default 8 for a local model, 1 for a hosted one).", min=1, max=16)] = None,
    timeout: Annotated[float, typer.Option(help="Seconds per model attempt.", min=0.1)] = 120.0,
    stream: Annotated[bool, typer.Option("--stream/--no-stream", help="Stream answers.")] = True,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help=(
        "No [vox] progress lines on stderr (shown by default when stderr is a terminal).")),
    ] = False,
) -> None:
    """Chat with the best model for the request; Vox code is compiler-checked and repaired."""
    from serving.errors import AllProvidersFailed, BudgetExceeded, ServingError, UnknownModel, UsageError
    from serving.keys import redact

    def err(text: str) -> None:
        typer.echo(redact(text), err=True, nl=False)

    try:
        result = _run(prompt, model, system, explain or dry_run, dry_run, local_only, max_cost, max_repairs,
                      cascade, vox, key or [], max_tokens, timeout, stream, err, candidates,
                      progress=not quiet and sys.stderr.isatty())
    except (UnknownModel, UsageError) as exc:
        err(f"error: {exc}\n")
        raise typer.Exit(2) from None
    except (AllProvidersFailed, BudgetExceeded, ServingError) as exc:
        err(f"error: {exc}\n")
        raise typer.Exit(1) from None
    except KeyboardInterrupt:  # as `vox run`: say why the command ended, exit 130 (128 + SIGINT)
        err("\nvox chat: interrupted\n")
        raise typer.Exit(130) from None
    if result is not None and result.exit_code(interactive=prompt is None):
        raise typer.Exit(result.exit_code(interactive=prompt is None))


def _run(prompt: str | None, model: str, system: str | None, explain: bool, dry_run: bool, local_only: bool,
         max_cost: float | None, max_repairs: int, k: int, vox: bool | None, key_opts: list[str],
         max_tokens: int | None, timeout: float, stream: bool, err: Callable[[str], None],
         candidates: int | None = None, *, progress: bool = False) -> ChatResult | None:
    from pipeline.prompt import system_prompt
    from serving.catalog import load_or_build, with_live_local
    from serving.errors import NoCandidates
    from serving.intent import is_vox_request
    from serving.keys import install_log_redaction, load_config_keys, parse_key_options, redact, resolve_all
    from serving.provider_status import ProviderHealth, load_exclusions, status_path
    from serving.router import DEFAULT_MAX_TOKENS, decide, resolve_model, route_request

    if prompt is not None and not prompt.strip():
        from serving.errors import UsageError

        raise UsageError("the PROMPT is empty: give a request, or omit it for an interactive session")
    install_log_redaction()
    keys = resolve_all(explicit=parse_key_options(key_opts), config=load_config_keys())
    catalog, rebuilt = load_or_build(warn=lambda m: err(f"warning: {m}\n"))
    if not rebuilt:
        catalog = with_live_local(catalog)
    resolve_model(model, catalog)  # an unknown --model is a usage error now, before any request is routed
    health = ProviderHealth(load_exclusions(), status_path())  # out-of-credit providers: session + cache
    if dry_run:
        if prompt is None:
            raise typer.BadParameter("--dry-run needs a PROMPT")
        is_vox = vox if vox is not None else is_vox_request(prompt)
        sys_text = system if system is not None else (system_prompt() if is_vox else "")  # as run_chat sends
        sent = ([{"role": "system", "content": sys_text}] if sys_text else []) + [{"role": "user", "content": prompt}]
        request = route_request(prompt, sent, max_output_tokens=max_tokens or DEFAULT_MAX_TOKENS,
                                max_tokens_given=max_tokens is not None, vox=vox, local_only=local_only,
                                budget_usd=max_cost)
        try:
            decision = decide(request, model, catalog=catalog, keys=set(keys), k=k, excluded=health.excluded())
        except NoCandidates as exc:  # show what was ranked and why each was rejected, then the error
            if exc.considered:
                typer.echo(exc.considered)
            raise
        typer.echo(decision.explain())
        return None
    if (keys and not local_only) or any(e.local and e.reachable is not False for e in catalog.entries):
        from serving.llm import import_litellm  # a model may be called: overlap the import with routing/typing

        threading.Thread(target=import_litellm, daemon=True, name="import-litellm").start()
    from serving.chat import ChatOptions, routed_sender, run_chat

    def write(text: str) -> None:
        sys.stdout.write(redact(text))
        sys.stdout.flush()

    def read_line(label: str) -> str | None:
        try:
            return input(label)
        except (EOFError, RuntimeError, OSError, ValueError):  # end of input; stdin closed ("lost sys.stdin")
            return None

    send = routed_sender(catalog, keys, model, k=k, local_only=local_only,
                         explain=(lambda t: err(t)) if explain else None,
                         timeout=timeout, max_tokens=max_tokens, stream=stream, health=health,
                         candidates=candidates, progress=err if progress else None)
    options = ChatOptions(system=system, max_repairs=max_repairs, vox=vox, max_cost_usd=max_cost)
    return run_chat(send, read_line, write, prompt=prompt, options=options)


def register(app: typer.Typer) -> None:
    """Attach ``vox chat`` to the `vox` app."""
    app.command("chat")(chat)
