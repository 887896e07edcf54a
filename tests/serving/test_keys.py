"""``--key`` provider names are case-insensitive (new-user tester: ``--key OPENAI=sk-...`` was
stored under ``OPENAI`` and the run then said ``no API key for openai``)."""

from __future__ import annotations

from serving.keys import parse_key_options, resolve_key


def test_key_option_provider_is_lower_cased() -> None:
    assert parse_key_options(["OPENAI=sk-x", " Anthropic = sk-y "]) == {"openai": "sk-x", "anthropic": "sk-y"}


def test_upper_case_key_option_resolves_for_the_provider() -> None:
    found = resolve_key("openai", explicit=parse_key_options(["OpenAI=sk-x"]), config={}, env={}, use_keyring=False)
    assert found is not None and found.source == "explicit"
