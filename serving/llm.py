"""The one place LiteLLM is imported: offline (bundled cost map), no telemetry, quiet, secrets redacted."""

from __future__ import annotations

import logging
import os
from typing import Any

from serving.keys import install_log_redaction


def import_litellm() -> Any:
    """Import LiteLLM offline (bundled cost map, no telemetry, quiet, secrets redacted); ≈5 s the
    first time, free afterwards. Returns the ``litellm`` module."""
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ.setdefault("LITELLM_TELEMETRY", "False")
    import litellm

    litellm.suppress_debug_info = True
    litellm.drop_params = True
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    install_log_redaction()
    return litellm
