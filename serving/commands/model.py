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
    from serving.catalog import cache_path, load_or_build, with_live_local
    from serving.errors import ServingError

    try:
        catalog, rebuilt = load_or_build(force=force, max_age=max_age, require_saved=True,
                                         warn=lambda m: typer.echo(f"warning: {m}", err=True))
        if not rebuilt:  # the hosted part may be a day old; local endpoints are probed now, as list and chat do
            catalog = with_live_local(catalog)
    except ServingError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    state = "rebuilt" if rebuilt else "cached (use --force to refresh)"
    typer.echo(f"{cache_path()}: {len(catalog.entries)} models, {state}")
    for name, info in sorted(catalog.sources.items()):
        nested = {k: v for k, v in info.items() if isinstance(v, dict)}  # e.g. local's endpoints: one line each
        detail = ", ".join(f"{k}={v}" for k, v in info.items() if k != "status" and k not in nested)
        typer.echo(f"  {name}: {info.get('status', '')} {detail}".rstrip())
        for key, rows in nested.items():
            typer.echo(f"    {key}:" if rows else f"    {key}: none")
            for where, state in rows.items():
                typer.echo(f"      {where}: {state}")
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
    usable: Annotated[bool, typer.Option("--usable", help="Only models `vox chat` can call now (a key for "
                                                          "the provider, or a local endpoint that answers).")] = False,
    limit: Annotated[int, typer.Option(help="Rows to show.", min=1)] = 50,
) -> None:
    """List catalog entries (prices in USD per million tokens; deploy: endpoints serving the model;
    usable: whether `vox chat` can call it now; listed first). The last line counts the usable
    models and says what would make more of them usable."""
    from serving.catalog import load_or_build, with_live_local
    from serving.errors import ServingError
    from serving.keys import load_config_keys, resolve_all
    from serving.provider_status import load_exclusions
    from serving.router import unavailable

    try:
        catalog, rebuilt = load_or_build(warn=lambda m: typer.echo(f"warning: {m}", err=True))
        keys = set(resolve_all(config=load_config_keys()))
        if not rebuilt:  # probe now, as `vox chat` does: a cached "none answered" may be a day old
            catalog = with_live_local(catalog)  # reads VOX_LOCAL_ENDPOINTS: a malformed one is a CatalogError
    except ServingError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    if provider == "local" and not any(e.local and e.reachable for e in catalog.entries):
        typer.echo(f"error: {_no_local_models(catalog.sources.get('local') or {})}", err=True)
        raise typer.Exit(1)
    known = sorted({e.provider for e in catalog.entries})
    if provider is not None and provider not in known:
        typer.echo(f"error: no models match provider `{provider}`; known providers: {', '.join(known)}", err=True)
        raise typer.Exit(1)
    excluded = load_exclusions()
    listed = [e for e in catalog.entries
              if (provider is None or e.provider == provider) and (not free or e.is_free or e.local)]
    ok = {e.id for e in listed if unavailable(e, keys, excluded) is None}
    summary = _usable_summary(catalog, listed, ok, keys, excluded)
    rows = sorted((e for e in listed if not usable or e.id in ok), key=lambda e: e.id not in ok)  # usable first
    if not rows:  # a bare table header would read as success; as for an unknown provider, exit 1
        asked = [f"provider `{provider}`"] * (provider is not None) + ["--free"] * free + ["--usable"] * usable
        said = f"no models match {' and '.join(asked)}" if asked else "the model catalog is empty"
        why = summary if usable and listed else _no_free_models(catalog) if free and provider is None else ""
        typer.echo(f"error: {said}" + (f"; {why}" if why else ""), err=True)
        raise typer.Exit(1)

    def price(v: float | None) -> str:
        return "?" if v is None else f"{v:g}"

    typer.echo(f"{'id':60} {'in$/M':>8} {'out$/M':>8} {'ctx':>8} {'IQ':>4} {'tok/s':>6} {'deploy':>6} usable")
    for e in rows[:limit]:
        typer.echo(f"{e.id:60} {price(e.input_usd_per_mtok):>8} {price(e.output_usd_per_mtok):>8} "
                   f"{e.context_window or '?':>8} {e.intelligence_prior:>4.0f} {e.speed_prior_tps:>6.0f} "
                   f"{e.deployment_count:>6} {'yes' if e.id in ok else 'no'}")
    if len(rows) > limit:
        typer.echo(f"... and {len(rows) - limit} more (--limit)")
    typer.echo(summary + ("; `--usable` lists only these" if ok and not usable and len(ok) < len(listed) else ""))


def _usable_summary(catalog: Any, listed: list[Any], ok: set[str], keys: set[str], excluded: dict[str, Any]) -> str:
    """``usable now: U of N models: ...``, then why: which providers have keys (or that none has),
    how many local models answer (or how to start one), which keyed providers are out of credit."""
    hosted = {e.provider for e in listed if not e.local}
    keyed = sorted(hosted & keys)
    why = []
    if hosted:
        why.append(f"keys for {', '.join(keyed)}" if keyed else
                   "no provider key is set (e.g. OPENAI_API_KEY, or `vox chat --key PROVIDER=KEY`, "
                   "$VOX_HOME/keys.json, the system keyring)")
    answering = sum(e.local and e.id in ok for e in listed)
    why.append(f"{answering} local model(s) answering" if answering else
               "no local model answers (start one with `vox serve`)")
    why += [excluded[p].describe() for p in sorted(set(excluded) & set(keyed))]
    if keyed and (catalog.sources.get("openrouter") or {}).get("status") == "unreachable":
        why.append("OpenRouter did not answer when the catalog was built: hosted models need the network")
    return f"usable now: {len(ok)} of {len(listed)} models: {'; '.join(why)}"


def _no_free_models(catalog: Any) -> str:
    """Why ``--free`` lists nothing: free models are local ones (none answers: why, from
    :func:`_local_why`) and hosted zero-cost ones (the catalog lists none: what OpenRouter's source
    record says), and how to get either."""
    router = catalog.sources.get("openrouter") or {}
    state = ": ".join(str(v) for v in (router.get("status"), router.get("error")) if v)
    hosted = "the catalog lists no zero-cost hosted model" + (f" (OpenRouter: {state})" if state else "")
    local = _local_why(catalog.sources.get("local") or {})
    return (f"free models are local ones and zero-cost hosted ones: {local}; "
            f"{hosted}; start a local model with `vox serve`, or rebuild the catalog online "
            "(`vox model discover --force`) for OpenRouter's free models")


def _local_why(status: dict[str, Any]) -> str:
    """Why no local model is listed, from the catalog's ``local`` source record."""
    endpoints = status.get("endpoints") or {}
    if not endpoints:
        why = "no local endpoint is configured (VOX_LOCAL_ENDPOINTS is empty and VOX_OLLAMA=0)"
    elif status.get("status") == "ok":
        why = f"the local endpoints answered but serve no model ({', '.join(endpoints)})"
    else:
        why = "no local endpoint answered (" + "; ".join(f"{url}: {state}" for url, state in endpoints.items()) + ")"
    return why


def _no_local_models(status: dict[str, Any]) -> str:
    """Why ``--provider local`` lists nothing, from the catalog's ``local`` source record
    (:func:`serving.catalog_sources.local_status`), and how to start a local model."""
    return (f"no local models: {_local_why(status)}; start one with `vox serve` "
            "(it listens on http://127.0.0.1:8000/v1), "
            "or set VOX_LOCAL_ENDPOINTS to the comma-separated base URLs of running OpenAI-compatible servers")


def register(app: typer.Typer) -> None:
    """Attach ``vox model`` to the `vox` app."""
    app.add_typer(model_app, name="model")
