"""What `vox check`/`run`/`test` say about a file that is not UTF-8 text (serving.commands.inputs)."""

from __future__ import annotations

import random

import pytest

from serving.commands.inputs import binary_reason, wide_encoding

SOURCE = "// a comment\nfn f(x: int) to int {\n  ret x + 1\n}\n"
CJK = "// 注释 こんにちは 안녕\nfn f() { }\n"
LATIN = "// café déjà\nlet s = \"naïve\"\n"
EMOJI = "// 😀 ok\nfn f() { }\n"


@pytest.mark.parametrize("text", [SOURCE, CJK, LATIN, EMOJI])
@pytest.mark.parametrize(("codec", "name"), [
    ("utf-16", "UTF-16"), ("utf-16-le", "UTF-16"), ("utf-16-be", "UTF-16"),
    ("utf-32", "UTF-32"), ("utf-32-le", "UTF-32"), ("utf-32-be", "UTF-32"),
])
def test_wide_text_is_named_with_or_without_a_byte_order_mark(text: str, codec: str, name: str) -> None:
    data = text.encode(codec)
    assert wide_encoding(data) == name
    assert binary_reason(data) == f"{name} text, not UTF-8: Vox source is UTF-8 (save the file as UTF-8)"


def test_a_surrogate_pair_cut_by_the_read_still_reads_as_utf16() -> None:
    data = ("x" * 2047 + "😀" + "tail").encode("utf-16-le")  # the pair straddles the 4,096-byte head
    assert wide_encoding(data) == "UTF-16"


@pytest.mark.parametrize(("label", "data"), [
    ("a mark, then binary", b"\xff\xfe" + random.Random(1).randbytes(300) + b"\x00\x01"),
    ("a UTF-32 mark, then binary", b"\xff\xfe\x00\x00" + random.Random(2).randbytes(300)),
    ("random bytes", random.Random(3).randbytes(500) + b"\x00"),
    ("an ELF header", b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8),
    ("UTF-8 text with one NUL", SOURCE.encode() + b"\x00"),
    ("UTF-8 text with a NUL in the middle", SOURCE.encode() * 20 + b"\x00" + SOURCE.encode()),
])
def test_binary_data_is_not_called_text(label: str, data: bytes) -> None:
    assert wide_encoding(data) is None, label
    assert (binary_reason(data) or "").startswith("binary file (NUL byte at offset "), label


def test_text_without_nul_is_not_refused() -> None:
    assert binary_reason(CJK.encode()) is None
