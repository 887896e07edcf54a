"""Serving: local inference, OpenAI-compatible server, model catalog, router, and the `vox` CLI.

Imports from the rest of the project are limited to ``vox_lang``, ``pipeline.prompt`` and
``pipeline.paths``. Heavy libraries (torch, transformers, LiteLLM) are imported lazily.
"""
