"""Where a ```vox block ends (pipeline.decoding_fence): the decoder's rule, applied by the eval's
extractor and stopping criterion (and by vox chat's extractor, tests/serving/test_extract.py)."""

from __future__ import annotations

import pytest

from pipeline.decoding_fence import closing_fence, first_block_closed, vox_blocks
from pipeline.decoding_layout import fence_close
from pipeline.eval_scoring import extract_vox, truncated

COMMENT = "fn f() to int {\n  ret 1 // ``` is a fence\n}\nprint(f())"
STRING = 'let s = "a ``` b"\nprint(s)'


@pytest.mark.parametrize("body", [
    "x\n```", "x```\nmore", "// ```\nx\n```", 'let s = "```"\n```', "no close", "", "```", "a // b ``` c",
    'print("\\"```")\n```', "````\n",
])
def test_backtick_fences_close_exactly_where_the_decoder_closes(body: str) -> None:
    assert closing_fence(body) == fence_close(body)


def test_longer_and_tilde_fences_close_only_on_their_own_runs() -> None:
    assert closing_fence("x\n```\ny\n````", "````") == len("x\n```\ny\n")
    assert closing_fence("x\n```\ny\n~~~", "~~~") == len("x\n```\ny\n")
    assert closing_fence("// ~~~\n~~~~", "~~~") == len("// ~~~\n")
    assert closing_fence("x\n~~\n", "~~~") == -1
    with pytest.raises(ValueError, match="not a code fence"):
        closing_fence("x", "``")


@pytest.mark.parametrize("code", [COMMENT, STRING])
def test_a_block_whose_comment_or_string_holds_backticks_is_extracted_whole(code: str) -> None:
    text = f"Here:\n```vox\n{code}\n```\nDone."
    assert extract_vox(text) == code
    assert not truncated(text) and first_block_closed(text)
    assert not first_block_closed(f"```vox\n{code}")  # the backticks inside do not end generation
    assert truncated(f"```vox\n{code}")


def test_a_fence_right_after_code_ends_the_block_everywhere() -> None:
    text = "```vox\nprint(1)```\nprose with ``` in it"
    assert extract_vox(text) == "print(1)" and not truncated(text) and first_block_closed(text)


def test_blocks_open_and_close_in_order() -> None:
    assert vox_blocks("```vox\na\n```\ntext\n```vox\nb\n```") == (["a\n", "b\n"], False)
    assert vox_blocks("```vox\na\n```\n```vox\nb") == (["a\n", "b"], True)
    assert vox_blocks("```vox\n```") == ([""], False)  # was counted as cut off
    assert vox_blocks("prose ```vox") == ([], True)  # cut inside the opening line: no block, but open
    assert extract_vox("prose ```vox") is None
    # a ```vox inside a closed block's comment opens nothing
    assert vox_blocks("```vox\n// write ```vox blocks\nx\n```") == (["// write ```vox blocks\nx\n"], False)
    assert vox_blocks("see ```vox `code` inline\n```vox\nx\n```") == (["x\n"], False)


def test_open_block_follows_blocks_from_the_start() -> None:
    from pipeline.decoding_fence import open_block

    assert open_block("Sure.\n") is None
    assert open_block("```vox\nlet x = 1\n") == "\nlet x = 1\n"
    assert open_block("```vox\nlet s = \"see ```vox\"\nret s") == "\nlet s = \"see ```vox\"\nret s"  # text, not a block
    assert open_block("```vox\nprint(1)\n```\nThen:\n") is None
    assert open_block("```vox\nprint(1)\n```\nThen:\n```vox\nprint(2") == "\nprint(2"
