"""Serving's small error hierarchy; the CLI maps these to clear messages and exit codes."""

from __future__ import annotations


class ServingError(Exception):
    """Root of every error raised by ``serving``."""


class ModelLoadError(ServingError):
    """A model directory is missing, incomplete or unreadable (message names the path and file)."""


class UnknownModel(ServingError):
    """A ``--model`` value is neither a routing mode, an alias, nor a catalog model id."""


class NoCandidates(ServingError):
    """Routing found no usable model (no keys, nothing local reachable, filters too strict);
    ``considered`` is the routing report of what was ranked and why each was rejected (the
    ``--explain`` text, no cascade), ``""`` where no router set it."""

    considered: str = ""


class PromptTooLong(NoCandidates):
    """No model can take the request because the prompt does not fit the context window of the
    models that could otherwise serve it; ``windows`` lists ``(model_id, context_window)``."""

    def __init__(self, message: str, windows: list[tuple[str, int]] | None = None) -> None:
        super().__init__(message)
        self.windows = windows or []


class AllProvidersFailed(ServingError):
    """Every model of the cascade failed; ``attempts`` lists ``(model_id, reason)`` pairs."""

    def __init__(self, message: str, attempts: list[tuple[str, str]] | None = None) -> None:
        super().__init__(message)
        self.attempts = attempts or []


class RequestRejected(AllProvidersFailed):
    """A model rejected the request itself (a plain HTTP 400/422: an invalid parameter, a refused
    prompt): the cascade stops there, because the same request would fail on every model. The
    message names the model and quotes the provider; ``attempts`` as for :class:`AllProvidersFailed`."""


class CatalogError(ServingError):
    """The model catalog cache is corrupt or a source returned malformed data."""


def param_path(*parts: str | int) -> str:
    """The one way a request field is named in ``vox serve``'s errors (message and ``param``):
    ``param_path("messages", 0, "role")`` is ``"messages[0].role"`` (list items in brackets)."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


class RequestError(ServingError):
    """A generation request is invalid (bad message, parameter out of range, prompt too long).

    ``param`` names the offending request field (OpenAI's ``error.param``, as :func:`param_path`
    writes it); ``code`` is a short machine-readable reason such as ``"context_length_exceeded"``.
    """

    def __init__(self, message: str, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.param = param
        self.code = code


class BudgetExceeded(ServingError):
    """``vox chat --max-cost`` is spent: no further model call is made in this chat."""


class UsageError(ServingError):
    """A value the user gave is malformed or names what is not there (``--key`` without
    ``PROVIDER=``, a missing model directory, an unknown device or host); exit code 2."""
