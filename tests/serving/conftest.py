"""Fixtures for serving tests: a tiny exported model built offline, and a live local server.

``tiny_export_dir`` is an exported-model directory exactly as the export stage writes it (HF model
dir + ``vox_mens.json``): a randomly initialised 2-layer Qwen3 causal LM, a byte-level BPE tokenizer
trained here on a few KB of text with a ``<|im_start|>``/``<|im_end|>`` chat template, and a
``generation_config.json`` whose ``eos_token_id`` is a list. Built in well under 5 s, no network.

``local_server`` serves that directory on a free loopback port in a background thread and yields
its OpenAI base URL (``http://127.0.0.1:<port>/v1``). ``replay`` is the scripted loopback model
server helper module (``replay_server.py``). ``keyless`` isolates a test from this machine's keys
and providers: no key in the environment or keyring, no Ollama, OpenRouter and the local endpoint
both on the discard port (refused at once).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# One torch thread: tiny models gain nothing from more, and on a loaded 2-core machine OpenMP
# threads spinning at barriers made some tests 50x slower.
os.environ.setdefault("OMP_NUM_THREADS", "1")

TINY_MODEL_NAME = "vox-mens-tiny"
#: the discard port: nothing listens there, so a probe or call is refused at once
NO_ENDPOINT = "http://127.0.0.1:9/v1"

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

# A few KB of Vox-flavoured code and English prose: enough for a byte-level BPE to learn merges.
_CORPUS_LINES = [
    "fn add(a: int, b: int) to int {",
    "    ret a + b",
    "}",
    "type Point = { x: float, y: float }",
    "// compute the total of a list of prices",
    "fn total(items: list[float]) to float {",
    "    let mut sum = 0.0",
    "    for item in items { sum = sum + item }",
    "    ret sum",
    "}",
    "actor Counter { state count: int = 0 }",
    "workflow Checkout { step pay to Receipt }",
    "@mcp.tool fn greet(name: str) to str { ret \"Hello, \" + name }",
    "match value { Ok(v) -> v, Error(e) -> 0 }",
    "You are a Vox programmer. Write correct Vox programs in fenced blocks.",
    "Write a function that returns the sum of two integers.",
    "The quick brown fox jumps over the lazy dog.",
    "Serving answers chat completions with a small local model.",
    "system user assistant",
]


def _train_tokenizer(vocab_size: int = 512) -> Any:
    """Train a byte-level BPE ``tokenizers.Tokenizer`` on the corpus above (≈ 50 ms)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_CORPUS_LINES * 20, trainer=trainer)
    return tok


def build_tiny_export(
    out_dir: Path,
    *,
    model_name: str = TINY_MODEL_NAME,
    system_prompt_mode: str = "none",  # a 512-token model cannot hold the SSOT prompt (as cpu-tiny)
    eval_passed: bool = True,
    config_overrides: dict[str, Any] | None = None,
    model_type: str = "qwen3",
    seed: int = 0,
) -> Path:
    """Write a tiny exported model directory to ``out_dir`` and return it.

    Args:
        out_dir: target folder (created).
        model_name: ``vox_mens.json["model_name"]`` (the served model id).
        system_prompt_mode: ``"ssot"`` or ``"none"``.
        eval_passed: recorded in ``vox_mens.json``.
        config_overrides: extra config fields (e.g. ``{"eos_token_id": [...]}``).
        model_type: ``"qwen3"``, or a hybrid linear/full attention ``"qwen3_next"`` /
            ``"qwen3_5_text"``.
        seed: torch seed for the random weights.
    """
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, GenerationConfig, PreTrainedTokenizerFast

    out_dir.mkdir(parents=True, exist_ok=True)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=_train_tokenizer(),
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(out_dir)
    im_end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    eot = tokenizer.convert_tokens_to_ids("<|endoftext|>")

    fields: dict[str, Any] = tiny_config_fields(model_type)
    fields.update(vocab_size=len(tokenizer), eos_token_id=im_end, pad_token_id=eot, bos_token_id=None)
    fields.update(config_overrides or {})
    config = AutoConfig.for_model(model_type, **fields)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config)
    model.generation_config = GenerationConfig(eos_token_id=[im_end, eot], pad_token_id=eot)
    model.save_pretrained(out_dir)
    meta = {
        "model_name": model_name,
        "base_model": f"tiny-random-{model_type}",
        "recipe": "test",
        "system_prompt_mode": system_prompt_mode,
        "pass_at_1": 0.5,
        "pass_at_k": {"k": 4, "value": 0.75},
        "eval_passed": eval_passed,
        "corpus_version": "test",
        "created": "2026-01-01T00:00:00+00:00",
    }
    (out_dir / "vox_mens.json").write_text(json.dumps(meta, indent=2))
    (out_dir / "README.md").write_text(f"# {model_name}\n\nTiny random test model.\n")
    return out_dir


def tiny_config_fields(model_type: str) -> dict[str, Any]:
    """Config fields for a tiny model of ``model_type`` (``qwen3``, ``qwen3_next``, ``qwen3_5_text``)."""
    common: dict[str, Any] = dict(
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        max_position_embeddings=512,
        tie_word_embeddings=False,
    )
    if model_type == "qwen3":
        return common
    # 3:1 linear to full attention, as in Qwen3-Next / Qwen3.5.
    hybrid = dict(
        common,
        num_hidden_layers=4,
        layer_types=["linear_attention"] * 3 + ["full_attention"],
        linear_num_value_heads=4,
        linear_num_key_heads=2,
        linear_key_head_dim=16,
        linear_value_head_dim=16,
        linear_conv_kernel_dim=4,
    )
    if model_type == "qwen3_next":
        # the same hybrid with a tiny MoE
        return dict(
            hybrid,
            num_experts=4,
            num_experts_per_tok=2,
            moe_intermediate_size=32,
            shared_expert_intermediate_size=32,
            decoder_sparse_step=1,
        )
    if model_type == "qwen3_5_text":
        # Qwen3.5 text decoder: the same hybrid, dense MLP.
        return hybrid
    raise ValueError(f"no tiny config for model_type {model_type!r}")


@pytest.fixture(scope="session")
def tiny_export_factory(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """A function ``make(**kwargs) -> Path`` building a tiny export in a fresh temp dir.

    Keyword arguments are those of :func:`build_tiny_export` (except ``out_dir``). Also sets
    torch to one thread (see ``OMP_NUM_THREADS`` above).
    """
    import torch

    torch.set_num_threads(1)

    def make(**kwargs: Any) -> Path:
        return build_tiny_export(tmp_path_factory.mktemp("export"), **kwargs)

    return make


@pytest.fixture(scope="session")
def tiny_export_dir(tiny_export_factory: Callable[..., Path]) -> Path:
    """A tiny exported model dir (Qwen3, EOS ids ``[<|im_end|>, <|endoftext|>]``, mode ``none``).

    Served model id: ``"vox-mens-tiny"`` (see ``TINY_MODEL_NAME``). Treat it as read-only.
    """
    return tiny_export_factory()


@pytest.fixture(scope="session")
def tiny_model_name() -> str:
    """The served model id of ``tiny_export_dir``."""
    return TINY_MODEL_NAME


@pytest.fixture(scope="session")
def server_factory() -> Iterator[Callable[..., str]]:
    """A function ``start(model_dir, **engine_kwargs) -> base_url`` serving on a free loopback port.

    Servers run in background threads and are stopped at the end of the test session.
    """
    from serving.engine import Engine
    from serving.server import ServerThread

    started: list[Any] = []

    def start(model_dir: Path, **engine_kwargs: Any) -> str:
        engine = Engine.load(model_dir, **engine_kwargs)
        thread = ServerThread(engine, host="127.0.0.1", port=0)
        thread.start()
        started.append(thread)
        return thread.base_url

    yield start
    for thread in started:
        thread.stop()


@pytest.fixture(scope="session")
def local_server(tiny_export_dir: Path, server_factory: Callable[..., str]) -> str:
    """Base URL (``http://127.0.0.1:<port>/v1``) of a server for ``tiny_export_dir`` (session-wide)."""
    return server_factory(tiny_export_dir, device="cpu")


@pytest.fixture(scope="session")
def replay() -> Any:
    """The module ``replay_server.py`` next to this file (``ReplayServer``, ``Scripted``), loaded once.

    Test files cannot import it by name under ``--import-mode=importlib``.
    """
    name = "vox_tests_replay_server"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("replay_server.py"))
        assert spec and spec.loader
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


@pytest.fixture
def keyless(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No provider key in the environment (every :data:`serving.keys.PROVIDER_ENV` name unset) or
    keyring (``VOX_NO_KEYRING=1``), no Ollama (``VOX_OLLAMA=0``), OpenRouter and the local endpoint
    on :data:`NO_ENDPOINT`. Returns the monkeypatch, for a test to point ``VOX_LOCAL_ENDPOINTS`` at
    its own server or set one key."""
    from serving.keys import PROVIDER_ENV

    for names in PROVIDER_ENV.values():
        for name in names:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("VOX_NO_KEYRING", "1")
    monkeypatch.setenv("VOX_OLLAMA", "0")
    monkeypatch.setenv("VOX_LOCAL_ENDPOINTS", NO_ENDPOINT)
    monkeypatch.setenv("VOX_OPENROUTER_URL", NO_ENDPOINT.replace("/v1", "/api/v1"))
    return monkeypatch
