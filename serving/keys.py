"""API-key resolution for hosted providers: explicit > config file > environment > keyring.

Keys are wrapped in :class:`Secret`, whose ``str``/``repr`` never show the value; only
:meth:`Secret.reveal` does, and only :func:`serving.router.complete` calls it to hand the key to
LiteLLM. Every revealed value is registered so :func:`redact` (and the logging filter installed
by :func:`install_log_redaction`) can scrub it from any text that reaches the user or a log.
The config file is ``$VOX_HOME/keys.json`` (``{"openai": "sk-..."}``); the keyring service
is ``vox`` with the provider name as user name.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from serving.errors import ServingError, UsageError

#: provider (LiteLLM's ``litellm_provider``) → environment variables holding its key, in order.
#: Providers not listed need more than a key (cloud credentials, deployments) and are never
#: routed to by ``vox chat``.
PROVIDER_ENV: Final[Mapping[str, tuple[str, ...]]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "openrouter": ("OPENROUTER_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY"),
    "fireworks_ai": ("FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY"),
    "deepinfra": ("DEEPINFRA_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "cohere_chat": ("COHERE_API_KEY", "CO_API_KEY"),
    "perplexity": ("PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"),
    "dashscope": ("DASHSCOPE_API_KEY",),
    "moonshot": ("MOONSHOT_API_KEY",),
    "novita": ("NOVITA_API_KEY",),
    "nebius": ("NEBIUS_API_KEY",),
    "sambanova": ("SAMBANOVA_API_KEY",),
    "zai": ("ZAI_API_KEY",),
}

KEYRING_SERVICE: Final = "vox"
_MASK: Final = "***"
_MIN_SECRET_LEN: Final = 6  # shorter values are not scrubbed (they would mangle ordinary text)

_revealed: set[str] = set()
_lock = threading.Lock()


class KeyConfigError(ServingError):
    """``$VOX_HOME/keys.json`` exists but is not a JSON object of provider → key strings."""


@dataclass(frozen=True)
class Secret:
    """A key value that does not print itself."""

    _value: str = field(repr=False)

    def reveal(self) -> str:
        """The raw value, registered for redaction (call only when handing it to a client)."""
        if len(self._value) >= _MIN_SECRET_LEN:
            with _lock:
                _revealed.add(self._value)
        return self._value

    def __str__(self) -> str:
        return _MASK

    def __repr__(self) -> str:
        return "Secret(***)"


@dataclass(frozen=True)
class ResolvedKey:
    """A provider's key and where it came from (``explicit``, ``config``, ``env:NAME``, ``keyring``)."""

    provider: str
    source: str
    secret: Secret


def vox_home() -> Path:
    """``$VOX_HOME`` (default ``~/.vox``): the CLI's user state; not created here."""
    return Path(os.environ.get("VOX_HOME") or Path.home() / ".vox").expanduser()


def load_config_keys(path: Path | None = None) -> dict[str, str]:
    """Keys from ``$VOX_HOME/keys.json`` (empty when nothing is there).

    Raises:
        KeyConfigError: the path is not a file (a directory), the file is unreadable or not an
            object of strings (message names the file, never a value).
    """
    path = path or vox_home() / "keys.json"
    if not path.exists():
        return {}
    if not path.is_file():  # a directory there is a mistake, as unreadable JSON is: never silently no keys
        raise KeyConfigError(f"{path}: not a file; expected a JSON object {{\"provider\": \"key\", ...}}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise KeyConfigError(f"{path}: not valid JSON ({type(exc).__name__}); expected "
                             '{"provider": "key", ...}') from None
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise KeyConfigError(f'{path}: expected a JSON object {{"provider": "key", ...}} of strings')
    return {str(k): v for k, v in data.items()}


def _keyring_get(provider: str) -> str | None:
    """The keyring entry for ``provider``, or None (no backend, locked, disabled by VOX_NO_KEYRING)."""
    if os.environ.get("VOX_NO_KEYRING", "").strip() not in ("", "0"):
        return None
    try:
        import keyring
        from keyring.errors import KeyringError

        return keyring.get_password(KEYRING_SERVICE, provider)
    except (ImportError, KeyringError, RuntimeError, OSError):
        return None


def resolve_key(
    provider: str,
    *,
    explicit: Mapping[str, str] | None = None,
    config: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    use_keyring: bool = True,
) -> ResolvedKey | None:
    """Find ``provider``'s key: explicit > config > environment > keyring.

    Args:
        provider: LiteLLM provider name (e.g. ``"openai"``).
        explicit: keys given on the command line (``--key openai=...``).
        config: keys from ``$VOX_HOME/keys.json`` (see :func:`load_config_keys`).
        env: environment (default ``os.environ``).
        use_keyring: consult the system keyring last.

    Returns:
        The key and its source, or ``None`` when none is set (empty strings count as unset).
    """
    env = os.environ if env is None else env
    for source, table in (("explicit", explicit), ("config", config)):
        value = (table or {}).get(provider, "").strip()
        if value:
            return ResolvedKey(provider, source, Secret(value))
    for name in PROVIDER_ENV.get(provider, ()):
        value = env.get(name, "").strip()
        if value:
            return ResolvedKey(provider, f"env:{name}", Secret(value))
    if use_keyring and provider in PROVIDER_ENV:
        value = (_keyring_get(provider) or "").strip()
        if value:
            return ResolvedKey(provider, "keyring", Secret(value))
    return None


def resolve_all(
    explicit: Mapping[str, str] | None = None,
    config: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    use_keyring: bool = True,
) -> dict[str, ResolvedKey]:
    """Every provider of :data:`PROVIDER_ENV` (plus explicit/config ones) that has a key."""
    providers = set(PROVIDER_ENV) | set(explicit or {}) | set(config or {})
    found = {}
    for p in sorted(providers):
        key = resolve_key(p, explicit=explicit, config=config, env=env, use_keyring=use_keyring)
        if key is not None:
            found[p] = key
    return found


def parse_key_options(options: list[str]) -> dict[str, str]:
    """``["openai=sk-..."]`` → ``{"openai": "sk-..."}``; the provider is lower-cased, as LiteLLM
    names them (``OPENAI=sk-...`` is the openai key, not an unknown provider).

    Raises:
        UsageError: an option without ``=`` or with an empty side. The message never echoes the
            option: without ``=`` the whole of it may be the key itself (``--key sk-...``).
    """
    out: dict[str, str] = {}
    for i, opt in enumerate(options, 1):
        provider, sep, value = opt.partition("=")
        if not sep or not provider.strip() or not value.strip():
            what = "has no `=`" if not sep else "has an empty side"
            raise UsageError(f"--key expects PROVIDER=KEY, e.g. --key openai=sk-…; --key option {i} {what} "
                             "(value not shown)")
        out[provider.strip().lower()] = value.strip()
    return out


def redact(text: str) -> str:
    """``text`` with every revealed key value replaced by ``***``."""
    with _lock:
        values = sorted(_revealed, key=len, reverse=True)
    for value in values:
        if value in text:
            text = text.replace(value, _MASK)
    return text


class RedactingFilter(logging.Filter):
    """Logging filter that scrubs revealed key values from every record it sees."""

    def filter(self, record: logging.LogRecord) -> bool:
        if _revealed:
            message = record.getMessage()
            clean = redact(message)
            if clean != message:
                record.msg, record.args = clean, None
        return True


def install_log_redaction(logger_names: tuple[str, ...] = ("", "LiteLLM", "LiteLLM Router",
                                                           "LiteLLM Proxy", "litellm", "httpx")) -> None:
    """Attach :class:`RedactingFilter` to the named loggers and their handlers (idempotent)."""
    for name in logger_names:
        logger = logging.getLogger(name)
        targets: list[logging.Filterer] = [logger, *logger.handlers]
        for target in targets:
            if not any(isinstance(f, RedactingFilter) for f in target.filters):
                target.addFilter(RedactingFilter())
