"""Dagster wiring: thin software-defined assets over ``pipeline`` (loaded by workspace.yaml)."""
