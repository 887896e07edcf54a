"""Dagster-free pipeline stages: system prompt, generators, gate, mix, train, export, evaluate.

One module per stage; each exposes typed functions that `assets/` wires together.
"""
