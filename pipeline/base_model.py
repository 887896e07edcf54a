"""The base model stage: a Hugging Face id/path, or ``bootstrap`` — a tiny Qwen3 built offline.

``bootstrap`` trains a byte-level BPE tokenizer on the corpus *train* split, attaches a ChatML
chat template (system/user/assistant, with ``{% generation %}`` markers so SFT can mask the
loss to assistant tokens), builds a small Qwen3-architecture config and pre-trains it briefly
on raw text (prompts and responses as plain documents, never chat-formatted, never held-out
rows or eval tasks). With ``pretrain_data: stream`` (default) it reads the train split once and
then a stream of freshly generated programs whose names are drawn anew for every program
(:mod:`pipeline.pretrain_stream`): no document is seen twice, so names must be copied from the
context rather than recalled. Nothing here touches the network.

CLI: ``python -m pipeline.base_model --recipe cpu-tiny --out DIR``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import math
import os
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from annotated_types import Ge, Gt, Le

from pipeline.errors import DataError, TrainingError
from pipeline.recipe_types import NonNegative, Positive, Seed

log = logging.getLogger(__name__)

BOOTSTRAP = "bootstrap"
BOS, EOS, PAD = "<|endoftext|>", "<|im_end|>", "<|pad|>"
IM_START = "<|im_start|>"
SPECIAL_TOKENS = (BOS, IM_START, EOS, PAD)
#: bump when the bootstrap procedure changes, so cached bootstrap models are rebuilt
BOOTSTRAP_VERSION = 3

#: ChatML; assistant turns are wrapped in ``{% generation %}`` (assistant-only loss) and the
#: end-of-turn token sits inside it so the model learns to stop.
CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{%- if message['role'] == 'assistant' %}"
    "{{- '<|im_start|>assistant\\n' }}{% generation %}{{- message['content'] + '<|im_end|>' }}"
    "{% endgeneration %}{{- '\\n' }}"
    "{%- else %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)


@dataclass(frozen=True)
class BaseModelConfig:
    """Recipe section ``base_model:``. Sizes are for ``bootstrap``; ignored for an HF id."""

    model: str = BOOTSTRAP  # "bootstrap", a Hugging Face model id, or a local model directory
    vocab_size: Positive = 2048  # BPE vocabulary incl. 4 special tokens (small: the corpus is narrow)
    hidden_size: Positive = 256  # residual width
    num_layers: Positive = 4  # transformer blocks
    num_heads: Positive = 4  # query heads (head_dim = hidden_size / num_heads)
    num_kv_heads: Positive = 2  # grouped-query attention, as in Qwen3
    intermediate_size: Positive = 768  # SwiGLU MLP width
    max_positions: Positive = 512  # context length in tokens
    pretrain_steps: Positive = 300  # optimizer steps of plain causal-LM pretraining
    pretrain_batch_size: Positive = 16  # blocks per step
    pretrain_block_size: Positive = 256  # tokens per block (tokens/step = batch * block)
    pretrain_lr: Annotated[float, Gt(0)] = 3e-3  # AdamW peak LR, cosine to 10% after warmup
    pretrain_warmup: NonNegative = 20  # linear warm-up steps
    pretrain_bf16: Literal["auto", "on", "off"] = "auto"  # bf16 autocast in pretraining: auto = where native (AMX
    # CPUs, CUDA), on, off
    pretrain_data: Literal["stream", "train_split"] = "stream"  # stream: train split once + fresh programs (no
    # repeats); train_split: passes over it
    pretrain_train_share: Annotated[float, Ge(0), Le(1)] = 0.5  # stream: most of the pretraining tokens the train
    # split (read once) fills
    tokenizer_stream_docs: NonNegative = 1000  # stream documents added to the tokenizer's training text (stream only)
    seed: Seed = 0  # init + data order
    torch_dtype: str = "bfloat16"  # load dtype for HF models on GPU (bootstrap stays float32)


@dataclass(frozen=True)
class BaseModelResult:
    """What the stage produced.

    Attributes:
        model: the HF id or the local directory to load with ``from_pretrained``.
        bootstrap: whether it was built here.
        params: parameter count (None for an HF id not loaded here).
        fingerprint: hex digest identifying the weights (for run keys and MLflow).
        pretrain_losses: per-step pretraining losses (empty for an HF id).
        pretrain_tokens: tokens seen in pretraining.
        seconds: wall time of the stage.
        reused: a cached bootstrap with the same fingerprint was reused.
        copy_probe: :class:`pipeline.copy_probe.CopyProbe` figures of a bootstrap model
            (``first_nll``, ``repeat_nll`` in nats, token counts): whether it copies names from its
            context; ``None`` for an HF id or a bootstrap built before the probe existed.
    """

    model: str
    bootstrap: bool
    params: int | None
    fingerprint: str
    pretrain_losses: tuple[float, ...] = ()
    pretrain_tokens: int = 0
    seconds: float = 0.0
    reused: bool = False
    copy_probe: dict[str, float | None] | None = None


def train_tokenizer(texts: list[str], vocab_size: int) -> Any:
    """Train a byte-level BPE tokenizer with the ChatML specials and chat template.

    Returns:
        a ``transformers.PreTrainedTokenizerFast`` (eos ``<|im_end|>``, pad ``<|pad|>``).
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=list(SPECIAL_TOKENS), show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(texts, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token=BOS, eos_token=EOS, pad_token=PAD,
        additional_special_tokens=[IM_START], model_max_length=1 << 20,
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def tiny_config(cfg: BaseModelConfig, tokenizer: Any) -> Any:
    """A Qwen3 config of ``cfg``'s sizes with the tokenizer's special ids (tied embeddings)."""
    from transformers import Qwen3Config

    return Qwen3Config(
        vocab_size=len(tokenizer), hidden_size=cfg.hidden_size, intermediate_size=cfg.intermediate_size,
        num_hidden_layers=cfg.num_layers, num_attention_heads=cfg.num_heads,
        num_key_value_heads=cfg.num_kv_heads, head_dim=cfg.hidden_size // cfg.num_heads,
        max_position_embeddings=cfg.max_positions, tie_word_embeddings=True,
        bos_token_id=tokenizer.convert_tokens_to_ids(BOS), eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )


def pretrain_texts(rows: list[dict[str, Any]]) -> list[str]:
    """Plain documents for pretraining, one per distinct train row: ``prompt + "\\n\\n" + response``.

    Repair rows (``source == "preflight"``) contribute only their response: their prompts hold
    deliberately broken programs, which a small model should not learn to write. Documents
    are raw text, never chat-formatted (the chat format is what fine-tuning teaches).

    Raises:
        DataError: a row is not from the train split (held-out text must never be seen).
    """
    seen: set[str] = set()
    docs: list[str] = []
    for row in rows:
        if row.get("split", "train") != "train":
            raise DataError(f"pretraining got a {row.get('split')!r} row ({row.get('id')}); train only")
        text = row["response"] if row.get("source") == "preflight" else f"{row['prompt']}\n\n{row['response']}"
        if text not in seen:
            seen.add(text)
            docs.append(text)
    return docs


def _blocks(tokenizer: Any, docs: list[str], block: int, seed: int) -> Any:
    """Concatenate ``docs`` (EOS-separated, shuffled) and cut into ``[n, block]`` id blocks."""
    import random

    import torch

    docs = list(docs)
    random.Random(seed).shuffle(docs)
    bos = tokenizer.convert_tokens_to_ids(BOS)
    ids: list[int] = []
    for enc in tokenizer(docs, add_special_tokens=False)["input_ids"]:
        ids.extend(enc + [bos])
    n = len(ids) // block
    if n == 0:
        raise DataError(f"pretraining text has {len(ids)} tokens, fewer than one block of {block}")
    return torch.tensor(ids[: n * block]).view(n, block)


def stream_blocks(tokenizer: Any, docs: list[str], n_blocks: int, block: int, seed: int,
                  train_share: float = 0.5) -> Any:
    """``[n_blocks, block]`` id blocks: ``docs`` (the train split) once, up to ``train_share`` of the
    tokens, then fresh stream documents (:func:`pipeline.pretrain_stream.stream_documents`) until
    there are enough; shuffled. Every block is seen once per pretraining run (steps x batch = ``n_blocks``).
    """
    import random

    import torch

    from pipeline.pretrain_stream import stream_documents

    bos = tokenizer.convert_tokens_to_ids(BOS)
    need = n_blocks * block
    train = list(docs)
    random.Random(seed).shuffle(train)
    ids: list[int] = []
    for enc in tokenizer(train, add_special_tokens=False)["input_ids"]:
        if len(ids) >= need * train_share:
            break
        ids.extend(enc + [bos])
    stream = stream_documents(seed)
    while len(ids) < need:
        chunk = [next(stream) for _ in range(256)]
        for enc in tokenizer(chunk, add_special_tokens=False)["input_ids"]:
            ids.extend(enc + [bos])
    data = torch.tensor(ids[:need]).view(n_blocks, block)
    return data[torch.randperm(n_blocks, generator=torch.Generator().manual_seed(seed))]


def pretrain(model: Any, tokenizer: Any, docs: list[str], cfg: BaseModelConfig) -> tuple[list[float], int]:
    """Plain causal-LM pretraining loop (AdamW, warm-up + cosine), on CPU/GPU as available.

    Returns:
        ``(per-step losses, tokens seen)``.

    Raises:
        TrainingError: the loss of a step is not a finite number (the run diverged), naming the step.
    """
    import torch

    from pipeline.loss_guard import require_finite
    from pipeline.quant import fast_bf16

    device = next(model.parameters()).device
    autocast = cfg.pretrain_bf16 == "on" or (cfg.pretrain_bf16 == "auto" and fast_bf16(device.type))
    if cfg.pretrain_data == "stream":
        data = stream_blocks(tokenizer, docs, cfg.pretrain_steps * cfg.pretrain_batch_size, cfg.pretrain_block_size,
                             cfg.seed, cfg.pretrain_train_share)
    elif cfg.pretrain_data == "train_split":
        data = _blocks(tokenizer, docs, cfg.pretrain_block_size, cfg.seed)
    else:
        raise DataError(f"base_model.pretrain_data={cfg.pretrain_data!r}: use stream or train_split")
    gen = torch.Generator().manual_seed(cfg.seed)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.pretrain_lr, weight_decay=0.1, betas=(0.9, 0.95))

    def lr_at(step: int) -> float:
        if step < cfg.pretrain_warmup:
            return cfg.pretrain_lr * (step + 1) / cfg.pretrain_warmup
        t = (step - cfg.pretrain_warmup) / max(1, cfg.pretrain_steps - cfg.pretrain_warmup)
        return cfg.pretrain_lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))

    model.train()
    losses: list[float] = []
    order = torch.randperm(len(data), generator=gen)
    pos = 0
    for step in range(cfg.pretrain_steps):
        if pos + cfg.pretrain_batch_size > len(order):
            order, pos = torch.randperm(len(data), generator=gen), 0
        batch = data[order[pos : pos + cfg.pretrain_batch_size]].to(device)
        pos += cfg.pretrain_batch_size
        for group in opt.param_groups:
            group["lr"] = lr_at(step)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=autocast):
            loss = model(input_ids=batch, labels=batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(float(loss.detach()))
        require_finite({"loss": losses[-1]}, step + 1, "pretraining")
        if step % 50 == 0 or step == cfg.pretrain_steps - 1:
            log.info("pretrain step %d/%d loss %.3f", step + 1, cfg.pretrain_steps, losses[-1])
    model.eval()
    return losses, cfg.pretrain_steps * cfg.pretrain_batch_size * cfg.pretrain_block_size


def fingerprint(cfg: BaseModelConfig, corpus_version: str) -> str:
    """Digest of everything that determines a bootstrap model (config + corpus version)."""
    blob = json.dumps({"cfg": asdict(cfg), "corpus": corpus_version, "v": BOOTSTRAP_VERSION}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def build_base_model(cfg: BaseModelConfig, train_rows: list[dict[str, Any]], out_dir: Path,
                     corpus_version: str = "") -> BaseModelResult:
    """Produce the base model: pass an HF id/path through, or build ``bootstrap`` into ``out_dir``.

    A bootstrap model already in ``out_dir`` with the same fingerprint is reused. The directory
    is written to a temp sibling and swapped in with ``os.replace``.

    Raises:
        DataError: no train rows (bootstrap needs text).
        TrainingError: a local model path that does not exist.
    """
    start = time.perf_counter()
    if cfg.model != BOOTSTRAP:
        local = Path(cfg.model).expanduser()
        if (cfg.model.startswith((".", "/", "~")) or local.exists()) and not (local / "config.json").is_file():
            raise TrainingError(f"base_model.model {cfg.model!r}: no config.json there")
        return BaseModelResult(model=str(local.resolve()) if local.exists() else cfg.model, bootstrap=False,
                               params=None, fingerprint=hashlib.sha256(cfg.model.encode()).hexdigest()[:16])
    if not train_rows:
        raise DataError("base_model bootstrap: the corpus train split is empty")
    fp = fingerprint(cfg, corpus_version)
    meta_path = out_dir / "bootstrap.json"
    if meta_path.is_file():
        meta = json.loads(meta_path.read_text())
        if meta.get("fingerprint") == fp:
            log.info("base_model: reusing bootstrap %s (same config and corpus)", out_dir)
            return BaseModelResult(**{**meta, "pretrain_losses": tuple(meta["pretrain_losses"]),
                                      "model": str(out_dir), "reused": True})

    import torch
    from transformers import AutoModelForCausalLM, GenerationConfig

    from pipeline.copy_probe import probe_copying

    torch.manual_seed(cfg.seed)
    docs = pretrain_texts(train_rows)
    tok_texts = docs
    if cfg.pretrain_data == "stream" and cfg.tokenizer_stream_docs:
        from itertools import islice

        from pipeline.pretrain_stream import stream_documents

        tok_texts = docs + list(islice(stream_documents(cfg.seed, start=1 << 40), cfg.tokenizer_stream_docs))
    tokenizer = train_tokenizer(tok_texts, cfg.vocab_size)
    model = AutoModelForCausalLM.from_config(tiny_config(cfg, tokenizer), dtype=torch.float32)
    if torch.cuda.is_available():
        model.to("cuda")
    losses, tokens = pretrain(model, tokenizer, docs, cfg)
    probe = probe_copying(model, tokenizer)
    log.info("base_model: %s", probe.summary())
    model.to("cpu")
    model.generation_config = GenerationConfig(
        eos_token_id=[tokenizer.eos_token_id, tokenizer.convert_tokens_to_ids(BOS)],
        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.convert_tokens_to_ids(BOS),
    )
    params = sum(p.numel() for p in model.parameters())
    tmp = out_dir.with_name(out_dir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    result = BaseModelResult(model=str(out_dir), bootstrap=True, params=params, fingerprint=fp,
                             pretrain_losses=tuple(losses), pretrain_tokens=tokens,
                             seconds=time.perf_counter() - start,
                             copy_probe=probe.figures())
    (tmp / "bootstrap.json").write_text(json.dumps(asdict(result), indent=1))
    old = out_dir.with_name(out_dir.name + ".old")
    if out_dir.exists():
        shutil.rmtree(old, ignore_errors=True)
        os.replace(out_dir, old)
    os.replace(tmp, out_dir)
    shutil.rmtree(old, ignore_errors=True)
    log.info("base_model: bootstrap %.1fM params, final pretrain loss %.3f, %.0fs",
             params / 1e6, losses[-1], result.seconds)
    return result


def main(argv: list[str] | None = None) -> int:
    """``python -m pipeline.base_model [--recipe R] [--out DIR]``: build the base model.

    Exit status as ``python -m pipeline.train`` (:func:`pipeline.train_cli.run_cli`): 2 for a bad
    recipe or a missing corpus, 1 for a failed build, each said in one line without a traceback.
    """
    from pipeline import corpus_io, paths
    from pipeline.recipes import stage_config
    from pipeline.train_cli import run_cli

    parser = argparse.ArgumentParser(prog="python -m pipeline.base_model", description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", default=None, help="recipe name or YAML path (default $VOX_RECIPE)")
    parser.add_argument("--out", type=Path, default=None, help="output dir (default artifacts/base_model/model)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    def body() -> None:
        cfg = stage_config(BaseModelConfig, "base_model", args.recipe)
        corpus = corpus_io.load_corpus()
        out = args.out or paths.artifacts_dir("base_model") / "model"
        result = build_base_model(cfg, corpus.train_rows(), out, corpus.version)
        print(json.dumps({k: v for k, v in asdict(result).items() if k != "pretrain_losses"}, indent=1))

    return run_cli(body)


if __name__ == "__main__":
    raise SystemExit(main())
