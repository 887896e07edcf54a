"""Fence extraction and reasoning stripping on the shapes models actually produce."""

from __future__ import annotations

import pytest

from serving.extract import ThinkFilter, extract_vox_blocks, is_vox_info, join_program, strip_reasoning


def codes(answer: str) -> list[str]:
    return [b.code for b in extract_vox_blocks(answer)]


def test_single_block_with_prose_around() -> None:
    answer = "Here you go:\n\n```vox\nlet x = 1\nprint(x)\n```\n\nThis prints 1."
    assert codes(answer) == ["let x = 1\nprint(x)"]
    assert extract_vox_blocks(answer)[0].line == 3


def test_several_blocks_in_order_and_other_languages_ignored() -> None:
    answer = "```vox\nfn a() to int { ret 1 }\n```\n```python\nprint('no')\n```\ntext\n```vox\nprint(a())\n```"
    assert codes(answer) == ["fn a() to int { ret 1 }", "print(a())"]
    assert join_program(extract_vox_blocks(answer)) == "fn a() to int { ret 1 }\n\nprint(a())\n"


@pytest.mark.parametrize("info", ["Vox", "VOX", "vox title=main", "vox,linenos", "{.vox}", "main.vox", " vox "])
def test_info_string_variants(info: str) -> None:
    assert codes(f"```{info}\nlet x = 1\n```") == ["let x = 1"]


@pytest.mark.parametrize("info", ["", "python", "voxel", "rust", "text"])
def test_non_vox_info_strings(info: str) -> None:
    assert not is_vox_info(info)
    assert codes(f"```{info}\nlet x = 1\n```") == []


def test_four_backtick_fence_keeps_inner_three_backtick_lines() -> None:
    answer = '````vox\nlet doc = "see below"\n```\nnot a close\n```\nprint(doc)\n````\nafter'
    assert codes(answer) == ['let doc = "see below"\n```\nnot a close\n```\nprint(doc)']


def test_vox_fence_nested_in_markdown_fence() -> None:
    answer = "````markdown\n# Example\n```vox\nlet n = 2\n```\n````\n"
    assert codes(answer) == ["let n = 2"]


def test_unterminated_fence_runs_to_end() -> None:
    blocks = extract_vox_blocks("Sure:\n```vox\nfn f() to int {\n  ret 1\n}")
    assert [b.code for b in blocks] == ["fn f() to int {\n  ret 1\n}"]
    assert blocks[0].terminated is False


def test_tilde_fence_and_indented_fence() -> None:
    assert codes("~~~vox\nlet a = 1\n~~~") == ["let a = 1"]
    assert codes("1. step\n   ```vox\n   let a = 1\n     let b = 2\n   ```") == ["let a = 1\n  let b = 2"]


def test_one_line_fence() -> None:
    assert codes("```vox print(1)```") == ["print(1)"]


def test_think_sections_are_removed_before_extraction() -> None:
    answer = "<think>maybe ```vox\nlet wrong = 1\n``` no</think>\n```vox\nlet right = 2\n```"
    assert codes(answer) == ["let right = 2"]


def test_reasoning_variants() -> None:
    assert strip_reasoning("<THINKING>x</THINKING>answer") == "answer"
    assert strip_reasoning("pre-reasoning without opener</think>answer") == "answer"
    assert strip_reasoning("answer<think>never closed") == "answer"


def test_no_blocks_gives_empty_list() -> None:
    assert codes("I cannot help with that.") == []
    assert join_program([]) == ""


def test_think_filter_streaming_hides_reasoning_across_chunk_boundaries() -> None:
    f = ThinkFilter()
    chunks = ["Hello <th", "ink>secret", " plan</thi", "nk> world", " a < b"]
    shown = "".join(f.feed(c) for c in chunks) + f.flush()
    assert shown == "Hello  world a < b"
    assert f.hidden_chars == len("secret plan")


LINE_ENDS = {"LF": "\n", "CRLF": "\r\n", "CR": "\r", "NEL": "\x85", "LS": "\u2028", "PS": "\u2029"}
PROGRAM = ["fn add(a: int, b: int) to int {", "    ret a + b", "}", "print(add(1, 2))"]


@pytest.mark.parametrize("style", [*LINE_ENDS, "mixed"])
def test_every_line_ending_style_closes_the_fence(style: str) -> None:
    # A CRLF reply used to keep "```\r" unrecognised as the closing fence: the block swallowed the prose.
    ends = list(LINE_ENDS.values()) if style == "mixed" else [LINE_ENDS[style]]
    lines = ["Here it is:", "```vox", *PROGRAM, "```", "It prints 3.", "```vox", "print(4)", "```"]
    answer = "".join(line + ends[i % len(ends)] for i, line in enumerate(lines))
    blocks = extract_vox_blocks(answer)
    assert [b.code for b in blocks] == ["\n".join(PROGRAM), "print(4)"]
    assert all(b.terminated for b in blocks) and [b.line for b in blocks] == [2, 9]
    import vox_lang

    assert vox_lang.check(join_program(blocks)).ok


def test_unterminated_block_after_crlf_is_still_marked() -> None:
    blocks = extract_vox_blocks("Sure:\r\n```vox\r\nfn f() to int {\r\n  ret 1\r\n}")
    assert [(b.code, b.terminated) for b in blocks] == [("fn f() to int {\n  ret 1\n}", False)]


@pytest.mark.parametrize("code", ["fn f() to int {\n  ret 1 // ``` is a fence\n}", 'let s = "a ``` b"\nprint(s)',
                                  '// ```vox\nprint("```")'])
def test_a_comment_or_string_holding_a_fence_does_not_end_the_block(code: str) -> None:
    blocks = extract_vox_blocks(f"Here:\n```vox\n{code}\n```\nDone.")
    assert [b.code for b in blocks] == [code] and blocks[0].terminated


def test_a_fence_right_after_code_ends_the_block_as_the_decoder_does() -> None:
    blocks = extract_vox_blocks("```vox\nfn f() to int {\n  ret 1\n}```\nIt returns 1.\n```vox\nprint(f())\n```")
    assert [b.code for b in blocks] == ["fn f() to int {\n  ret 1\n}", "print(f())"]
    assert codes("````vox\nlet a = 1 ```\nlet b = 2````") == ["let a = 1 ```\nlet b = 2"]
    assert codes("~~~vox\nlet a = 1 ~~~\nafter") == ["let a = 1"]


@pytest.mark.parametrize("answer", [
    "```vox\nprint(1)\n```", "a\n```vox\nfn f() { } // ```\n```\nb\n```vox\nprint(2)```", 'x\n```vox\nlet s = "```"\n',
    "```vox\nlet a = 1\n```\n```python\nno\n```", "```vox\n```",
])
def test_vox_chat_and_the_eval_read_the_same_blocks(answer: str) -> None:
    from pipeline.decoding_fence import vox_blocks

    found, still_open = vox_blocks(answer)
    blocks = extract_vox_blocks(answer)
    assert [b.code for b in blocks] == [code.strip("\n") for code in found]
    assert (bool(blocks) and not blocks[-1].terminated) == still_open
