"""How much context the repair turn needs: p50/p95/max tokens of the chat repair prompt and of
the preflight SFT rows, with a bootstrap-style tokenizer (issue 9 item 5: size cpu-tiny to it).

The chat repair prompt is what ``vox chat`` sends (:func:`serving.chat_repair.repair_messages`): the
request, the checked program as one ```vox block and the diagnostics, chat-templated with a
generation prompt (``system_prompt_mode: none``, as cpu-tiny); "+ answer" adds the fixed
program the model must write back. Corpus: the cpu-tiny recipe's generator settings.

    .venv/bin/python bench/repair_context.py [--pairs 2000] [--vocab 2048]
"""

from __future__ import annotations

import argparse
import statistics


def _pct(values: list[int], q: float) -> int:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main() -> None:
    """Print the token-length percentiles."""
    from pipeline.base_model import pretrain_texts, train_tokenizer
    from pipeline.generators import REPAIR_FAMILY, generate_pairs, plan
    from serving.chat_repair import repair_message, repair_messages

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--vocab", type=int, default=2048)
    args = parser.parse_args()
    weights = {"organic": 0.5, "synthetic_script": 0.15, "synthetic_web": 0.1, "preflight": 0.25}
    rows = generate_pairs(plan(args.pairs, weights, seed=1234), workers=2)
    docs = pretrain_texts([{"prompt": r.prompt, "response": r.response, "source": r.source} for r in rows])
    tok = train_tokenizer(docs, args.vocab)
    request = {r.instance_id: r.prompt for r in rows if r.id.endswith("-p0")}

    def n_tokens(messages: list[dict[str, str]], generation: bool) -> int:
        text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=generation)
        return len(tok(text, add_special_tokens=False)["input_ids"])

    repair_prompt, with_answer, sft_rows, write_rows = [], [], [], []
    for r in rows:
        if r.family != REPAIR_FAMILY:
            write_rows.append(n_tokens([{"role": "user", "content": r.prompt},
                                        {"role": "assistant", "content": r.response}], False))
            continue
        sft_rows.append(n_tokens([{"role": "user", "content": r.prompt},
                                  {"role": "assistant", "content": r.response}], False))
        diags = r.prompt.split("```text\n", 1)[1].rsplit("\n```", 1)[0]
        n_err = diags.count("error[")
        msgs = repair_messages([], request.get(r.instance_id, ""), r.broken, "", repair_message(diags, n_err, 1))
        p = n_tokens(msgs, True)
        fixed = r.response.split("Fixed program:\n\n", 1)[-1]
        repair_prompt.append(p)
        with_answer.append(p + len(tok(fixed + "<|im_end|>", add_special_tokens=False)["input_ids"]))
    for name, vals in (("chat repair prompt", repair_prompt), ("chat repair prompt + answer", with_answer),
                       ("preflight SFT row", sft_rows), ("write-a-program SFT row", write_rows)):
        print(f"{name:30s} n={len(vals):5d}  p50={int(statistics.median(vals)):5d}  p95={_pct(vals, 0.95):5d}  "
              f"max={max(vals):5d} tokens")


if __name__ == "__main__":
    main()
