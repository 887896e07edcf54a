"""`vox model discover|list`: build and inspect the model catalog
(``$VOX_HOME/cache/model-catalog.v1.json``). Only typer and the standard library load here.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

model_app = typer.Typer(help="The model catalog used by `vox chat` routing.", no_args_is_help=True)


@model_app.command("discover")
def discover(
    force: Annotated[bool, typer.Option("--force", help="Rebuild even if the cache is fresh.")] = False,
    max_age: Annotated[float | None, typer.Option(help="Reuse a cache younger than this (seconds; "
                                                       "default VOX_CATALOG_MAX_AGE or 86400).", min=0)] = None,
) -> None:
    """Gather models from LiteLLM's cost map, OpenRouter (if reachable) and local endpoints."""
    from serving.catalog import cache_path, load_or_build
    from serving.errors import ServingError

    try:
        catalog, rebuilt = load_or_build(force=force, max_age=max_age, require_saved=True,
                                         warn=lambda m: typer.echo(f"warning: {m}", err=True))
    except ServingError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    state = "rebuilt" if rebuilt else "cached (use --force to refresh)"
    typer.echo(f"{cache_path()}: {len(catalog.entries)} models, {state}")
    for name, info in sorted(catalog.sources.items()):
        detail = ", ".join(f"{k}={v}" for k, v in info.items() if k != "status")
        typer.echo(f"  {name}: {info.get('status', '')} {detail}".rstrip())
    for e in catalog.entries:
        if e.local:
            p1 = "n/a" if e.vox_pass_at_1 is None else f"{e.vox_pass_at_1:.2f}"
            where = ", ".join(e.deployments) or str(e.api_base)
            n = f"{e.deployment_count} deployments, " if e.deployment_count > 1 else ""
            typer.echo(f"  local model {e.id} at {where} ({n}Vox pass@1 {p1})")


@model_app.command("list")
def list_models(
    provider: Annotated[str | None, typer.Option(help="Only this provider (e.g. openai, local).")] = None,
    free: Annotated[bool, typer.Option("--free", help="Only free models.")] = False,
    limit: Annotated[int, typer.Option(help="Rows to show.", min=1)] = 50,
) -> None:
    """List catalog entries (prices in USD per million tokens; deploy: endpoints serving the model)."""
    from serving.catalog import load_or_build, with_live_local
    from serving.errors import ServingError

    try:
        catalog, rebuilt = load_or_build(warn=lambda m: typer.echo(f"warning: {m}", err=True))
    except ServingError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    if provider == "local":
        if not rebuilt:  # probe now, as `vox chat` does: a cached "none answered" may be a day old
            catalog = with_live_local(catalog)
        if not any(e.local and e.reachable for e in catalog.entries):
            typer.echo(f"error: {_no_local_models(catalog.sources.get('local') or {})}", err=True)
            raise typer.Exit(1)
    known = sorted({e.provider for e in catalog.entries})
    if provider is not None and provider not in known:
        typer.echo(f"error: no models match provider `{provider}`; known providers: {', '.join(known)}", err=True)
        raise typer.Exit(1)
    rows = [e for e in catalog.entries
            if (provider is None or e.provider == provider) and (not free or e.is_free or e.local)]
    if not rows:  # a bare table header would read as success; as for an unknown provider, exit 1
        asked = [f"provider `{provider}`"] * (provider is not None) + ["--free"] * free
        typer.echo(f"error: no models match {' and '.join(asked)}" if asked else "error: the model catalog is empty",
                   err=True)
        raise typer.Exit(1)

    def price(v: float | None) -> str:
        return "?" if v is None else f"{v:g}"

    typer.echo(f"{'id':60} {'in$/M':>8} {'out$/M':>8} {'ctx':>8} {'IQ':>4} {'tok/s':>6} {'deploy':>6}")
    for e in rows[:limit]:
        typer.echo(f"{e.id:60} {price(e.input_usd_per_mtok):>8} {price(e.output_usd_per_mtok):>8} "
                   f"{e.context_window or '?':>8} {e.intelligence_prior:>4.0f} {e.speed_prior_tps:>6.0f} "
                   f"{e.deployment_count:>6}")
    if len(rows) > limit:
        typer.echo(f"... and {len(rows) - limit} more (--limit)")


def _no_local_models(status: dict[str, Any]) -> str:
    """Why ``--provider local`` lists nothing, from the catalog's ``local`` source record
    (:func:`serving.catalog_sources.local_status`), and how to start a local model."""
    endpoints = status.get("endpoints") or {}
    if not endpoints:
        why = "no local endpoint is configured (VOX_LOCAL_ENDPOINTS is empty and VOX_OLLAMA=0)"
    elif status.get("status") == "ok":
        why = f"the local endpoints answered but serve no model ({', '.join(endpoints)})"
    else:
        why = "no local endpoint answered (" + "; ".join(f"{url}: {state}" for url, state in endpoints.items()) + ")"
    return (f"no local models: {why}; start one with `vox serve` (it listens on http://127.0.0.1:8000/v1), "
            "or set VOX_LOCAL_ENDPOINTS to the comma-separated base URLs of running OpenAI-compatible servers")


def register(app: typer.Typer) -> None:
    """Attach ``vox model`` to the `vox` app."""
    app.add_typer(model_app, name="model")
