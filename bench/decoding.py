"""Decoding benchmark: cost of the Vox masks per token, and what they do to completed blocks.

Builds, offline, the default recipe's model *shape* (the ``base_model`` section of cpu-tiny:
vocab 2048 byte-level BPE trained here on generated corpus programs, 4 layers, hidden 128 since
2026-12-04; 256 before) with random weights — or loads ``--model DIR`` (an export) in float32, as
``vox serve`` loads it on a CPU (the export's own dtype, float16, is slower there: a
decode step of 2,341 vs 1,935 µs on the default export, 2026-12-04) — then:

1. µs per generated token: the plain decode step (``model.generate``, greedy, no processors) and
   the added time of the grammar mask (llguidance, with the canonical-layout cap of
   ``pipeline.decoding_layout``) and of the name/request mask (with the stop-when-done and budget
   rules of ``pipeline.decoding_done``), measured inside
   the processors while decoding ``--tokens`` tokens of one ```vox block (code mode); then the
   wall clock per token, paired with plain decoding of as many tokens from the same seed, of the
   masks built in process and of the same masks built by ``vox serve``'s mask worker
   (``pipeline.decoding_remote``: a second process builds each step's mask during the forward
   pass), median over rounds. Goal: masks ≤ 10% of the decode step, as served.
2. On the eval tasks (``pipeline/data/eval_tasks*.yaml``), one sampled answer per task in code
   mode under three policies (grammar only, grammar + names, unconstrained): completed blocks,
   blocks cut by the token limit, syntax errors (E01xx/E02xx) in completed blocks, E0401/E0403
   in completed blocks, and "declares what was asked" among tasks that name something.

A random model says nothing about quality; use ``--model`` on a trained export for that.
Run: ``.venv/bin/python bench/decoding.py [--model DIR] [--tokens 192] [--seeds 8] [--rounds 2] [--max-new 160]
[--wall-rounds 5] [--timing-only]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def build_random(vocab: int = 2048) -> tuple[Any, Any]:
    """The cpu-tiny base model shape with random weights and a tokenizer trained on generated programs."""
    import torch
    from transformers import AutoModelForCausalLM

    from pipeline.base_model import BaseModelConfig, tiny_config, train_tokenizer
    from pipeline.generators import FAMILIES, generate_program
    from pipeline.recipes import stage_config

    texts = []
    for family in FAMILIES:
        for i in range(60):
            program = generate_program(family.name, 11, i)[2]
            texts += [program.prompts[0], f"```vox\n{program.code}\n```\n{program.note}"]
    tok = train_tokenizer(texts, vocab)
    cfg = stage_config(BaseModelConfig, "base_model", "cpu-tiny", {"vocab_size": vocab})
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(tiny_config(cfg, tok)).eval()
    return model, tok


class Timed:
    """Wrap a LogitsProcessor and add up the seconds spent in it."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.seconds, self.calls = inner, 0.0, 0

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        start = time.perf_counter()
        out = self.inner(input_ids, scores)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        return out


def per_token(model: Any, tok: Any, tokens: int, seeds: int = 1, rounds: int = 2) -> dict[str, float]:
    """µs/token of the decode step and of each mask (see module docstring, item 1), over
    ``seeds`` sampled blocks (one block is a few dozen tokens when it closes early: noisy).

    Each masked block is paired with a plain run of as many tokens from the same seed, right
    after it (the same sequence lengths, so the same KV-cache sizes; the machine's speed drifts
    by tens of percent over a minute, so unpaired runs are not comparable). The first of
    ``rounds`` rounds warms the caches (the grammar's lexer states, the token tables' masks)
    and is not counted when there are more; a server runs in that steady state.
    """
    from pipeline.decoding import SamplingParams, encode_chat, generate_ids
    from pipeline.decoding_constraint import VoxGrammar
    from pipeline.decoding_done import request_extras
    from pipeline.decoding_names import NameMask, token_table
    from vox_lang.requests import extract_request

    request = "Write a function `late_orders(days: List[int], limit: int) to int` counting late orders."
    prompt = encode_chat(tok, [{"role": "user", "content": request}])
    list(generate_ids(model, prompt, SamplingParams(max_new_tokens=8)))  # warm-up
    grammar = VoxGrammar(tok, [tok.eos_token_id], model.config.vocab_size)
    table = token_table(tok)
    totals: dict[str, float] = {}
    for round_ in range(rounds):
        m, plain, seconds, g_seconds, g_calls, n_seconds, n_calls = 0, 0.0, 0.0, 0.0, 0, 0.0, 0
        for seed in range(1, seeds + 1):
            g = Timed(grammar.processor(1, len(prompt), "code"))
            names = Timed(NameMask(tok, table, [extract_request(request)], len(prompt), [tok.eos_token_id],
                                   extras=[request_extras(request)], budget=tokens))
            params = SamplingParams(max_new_tokens=tokens, temperature=1.0, seed=seed)
            start = time.perf_counter()
            # with the EOS id: a closed block ends the answer (code mode), so every masked step is a step of the block
            k = sum(1 for _ in generate_ids(model, prompt, params, [tok.eos_token_id], processors=[g, names]))
            seconds += time.perf_counter() - start
            start = time.perf_counter()
            assert sum(1 for _ in generate_ids(model, prompt, SamplingParams(max_new_tokens=k, temperature=1.0,
                                                                             seed=seed))) == k
            plain += time.perf_counter() - start
            m += k
            g_seconds, g_calls, n_seconds, n_calls = (g_seconds + g.seconds, g_calls + g.calls,
                                                      n_seconds + names.seconds, n_calls + names.calls)
        if round_ == rounds - 1 or round_ == 0 and rounds == 1:
            totals = {"tokens": m, "decode_us": plain / m * 1e6, "masked_decode_us": seconds / m * 1e6,
                      "grammar_us": g_seconds / max(g_calls, 1) * 1e6, "names_us": n_seconds / max(n_calls, 1) * 1e6}
    return totals


def wall_clock(model: Any, tok: Any, tokens: int, seeds: int, rounds: int) -> dict[str, float]:
    """Item 1's wall-clock figures: per round, ``seeds`` blocks each decoded with the masks in
    process, plainly (as many tokens, same seed) and with the mask worker, in that order; the
    median over rounds (the first, warming caches, not counted) of each masked run's time over
    the plain one's, minus 1. The worker must give the same tokens as the in-process masks."""
    import statistics

    from pipeline.decoding import SamplingParams, encode_chat, generate_ids
    from pipeline.decoding_masks import MaskKit, MaskSpec, request_masks
    from pipeline.decoding_remote import MaskWorker

    request = "Write a function `late_orders(days: List[int], limit: int) to int` counting late orders."
    prompt = encode_chat(tok, [{"role": "user", "content": request}])
    eos = [tok.eos_token_id]
    kit = MaskKit.build(tok, eos, model.config.vocab_size)
    worker = MaskWorker(tok, eos, model.config.vocab_size)
    spec = MaskSpec("code", len(prompt), tokens, True, request)
    local: list[float] = []
    remote: list[float] = []
    plain_us: list[float] = []
    try:
        for round_ in range(max(rounds, 2)):
            t_local = t_plain = t_remote = 0.0
            count = 0
            for seed in range(1, seeds + 1):
                params = SamplingParams(max_new_tokens=tokens, temperature=1.0, seed=seed)
                start = time.perf_counter()
                a = list(generate_ids(model, prompt, params, eos, processors=request_masks(kit, spec, 1)))
                t_local += time.perf_counter() - start
                start = time.perf_counter()
                plain = SamplingParams(max_new_tokens=len(a), temperature=1.0, seed=seed)
                assert len(list(generate_ids(model, prompt, plain))) == len(a)
                t_plain += time.perf_counter() - start
                start = time.perf_counter()
                b = list(generate_ids(model, prompt, params, eos, processors=worker.processors(spec, 1, prompt)))
                t_remote += time.perf_counter() - start
                assert a == b, f"seed {seed}: the worker's masks gave other tokens"
                count += len(a)
            if round_:
                local.append(t_local / t_plain - 1)
                remote.append(t_remote / t_plain - 1)
                plain_us.append(t_plain / count * 1e6)
    finally:
        worker.close()
    return {"plain_us": statistics.median(plain_us), "in_process": statistics.median(local),
            "worker": statistics.median(remote), "rounds": len(remote)}


def tasks() -> list[dict[str, Any]]:
    import yaml

    out: list[dict[str, Any]] = []
    for path in sorted((ROOT / "pipeline/data").glob("eval_tasks*.yaml")):
        out += yaml.safe_load(path.read_text(encoding="utf-8"))["tasks"]
    return out


def block_stats(model: Any, tok: Any, max_new: int, policy: str) -> dict[str, Any]:
    """Item 2 of the module docstring, for one policy: ``grammar``, ``names`` or ``none``."""
    import vox_lang
    from pipeline.decoding_batch import HFGenerator
    from pipeline.decoding_constraint import VoxGrammar, batch_processors
    from vox_lang.requests import extract_request, missing_items

    factory = None
    if policy != "none":
        grammar = VoxGrammar(tok, [tok.eos_token_id], model.config.vocab_size)
        factory = batch_processors(grammar, "code", tok, names=policy == "names", require=policy == "names",
                                   budget=max_new)
    gen = HFGenerator(model, tok, max_new_tokens=max_new, temperature=1.0, batch_size=16, seed=3,
                      constrained=False, constraint=factory)
    ts = tasks()
    start = time.perf_counter()
    outs = gen([[{"role": "user", "content": t["prompt"]}] for t in ts], 1)
    seconds = time.perf_counter() - start
    codes: Counter[str] = Counter()
    done = cut = syntax = named = declared = 0
    for task, (text,) in zip(ts, outs):
        begin = text.find("```vox")
        end = text.find("```", begin + 6) if begin >= 0 else -1
        if end < 0:
            cut += 1
            continue
        done += 1
        code = text[begin + 6:end]
        result = vox_lang.check(code, strict=True)
        found = {d.code for d in result.errors}
        codes.update(found)
        syntax += any(c.startswith(("E01", "E02")) for c in found)
        spec = extract_request(task["prompt"])
        if spec:
            named += 1
            declared += not missing_items(spec, code)
    return {"policy": policy, "tasks": len(ts), "completed": done, "cut_by_limit": cut, "syntax_error_blocks": syntax,
            "E0401_blocks": codes["E0401"], "E0403_blocks": codes["E0403"], "named_and_completed": named,
            "declares_what_was_asked": declared, "seconds": round(seconds, 1)}


def main(argv: list[str] | None = None) -> int:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None, help="an exported model directory (default: random)")
    parser.add_argument("--tokens", type=int, default=192, help="token limit of each timed block")
    parser.add_argument("--seeds", type=int, default=8, help="sampled blocks for the per-token timing")
    parser.add_argument("--max-new", type=int, default=160, help="token limit per eval answer")
    parser.add_argument("--rounds", type=int, default=2, help="timing rounds; the first warms caches (not counted)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--wall-rounds", type=int, default=5,
                        help="rounds of the paired wall-clock comparison; the first warms caches (not counted)")
    parser.add_argument("--timing-only", action="store_true", help="only item 1 (µs/token), skip the eval tasks")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.model:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32).eval()
        tok = AutoTokenizer.from_pretrained(args.model)
    else:
        model, tok = build_random()
    timing = per_token(model, tok, args.tokens, args.seeds, args.rounds)
    share = (timing["grammar_us"] + timing["names_us"]) / timing["decode_us"]
    wall = timing["masked_decode_us"] / timing["decode_us"] - 1
    print(f"decode step: {timing['decode_us']:.0f} µs/token without masks, {timing['masked_decode_us']:.0f} with "
          f"(paired, {timing['tokens']:.0f} tokens of {args.seeds} blocks each; wall clock +{wall:.1%})")
    print(f"grammar mask: {timing['grammar_us']:.0f} µs/token; name/request mask: {timing['names_us']:.0f} µs/token "
          "(main-thread time in the processors)")
    print(f"masks together: {share:.1%} of the decode step, in process")
    clock = wall_clock(model, tok, args.tokens, args.seeds, args.wall_rounds)
    print(f"wall clock per token, paired with plain decoding ({clock['plain_us']:.0f} µs), median of "
          f"{clock['rounds']:.0f} rounds: masks in process +{clock['in_process']:.1%}; mask worker (vox serve) "
          f"+{clock['worker']:.1%} (goal <= 10%)")
    for policy in () if args.timing_only else ("grammar", "names", "none"):
        print(block_stats(model, tok, args.max_new, policy))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
