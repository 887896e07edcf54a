"""What `vox check`/`run`/`test` say about a file that is not UTF-8 text (serving.commands.inputs)."""

from __future__ import annotations

import random

import pytest

from serving.commands.inputs import binary_reason, wide_encoding

SOURCE = "// a comment\nfn f(x: int) to int {\n  ret x + 1\n}\n"
CJK = "// 注释 こんにちは 안녕\nfn f() { }\n"
LATIN = "// café déjà\nlet s = \"naïve\"\n"
EMOJI = "// 😀 ok\nfn f() { }\n"


#: comments in another script: a file whose start is mostly not ASCII, in lines of source length
CJK_HEADER = "".join("// " + "".join(chr(0x4E00 + (i * 7 + j) % 2000) for j in range(60)) + "\n"
                     for i in range(40)) + "fn f() { }\n"


@pytest.mark.parametrize("text", [SOURCE, CJK, LATIN, EMOJI, CJK_HEADER])
@pytest.mark.parametrize(("codec", "name", "bom"), [
    ("utf-16-le", "UTF-16 LE", b""), ("utf-16-be", "UTF-16 BE", b""),
    ("utf-16-le", "UTF-16 LE", b"\xff\xfe"), ("utf-16-be", "UTF-16 BE", b"\xfe\xff"),
    ("utf-32-le", "UTF-32 LE", b""), ("utf-32-be", "UTF-32 BE", b""),
    ("utf-32-le", "UTF-32 LE", b"\xff\xfe\x00\x00"), ("utf-32-be", "UTF-32 BE", b"\x00\x00\xfe\xff"),
])
def test_wide_text_is_named_with_its_byte_order_and_mark(text: str, codec: str, name: str, bom: bytes) -> None:
    data = bom + text.encode(codec)
    wide = wide_encoding(data)
    assert wide is not None and (wide.name, wide.bom) == (name, bom)
    mark = f"byte order mark {bom.hex(' ').upper()}" if bom else "no byte order mark"
    assert binary_reason(data) == f"{name} text ({mark}), not UTF-8: Vox source is UTF-8 (save the file as UTF-8)"


@pytest.mark.parametrize(("codec", "mark"), [("utf-16", "FF FE"), ("utf-32", "FF FE 00 00")])
def test_python_s_own_utf16_and_utf32_name_their_mark(codec: str, mark: str) -> None:
    """What a little-endian host writes for "utf-16"/"utf-32": the mark, then little-endian text."""
    assert binary_reason(SOURCE.encode(codec)) == (f"{codec.upper()} LE text (byte order mark {mark}), not UTF-8: "
                                                   "Vox source is UTF-8 (save the file as UTF-8)")


def test_a_surrogate_pair_cut_by_the_read_still_reads_as_utf16() -> None:
    data = ("x" * 2047 + "😀" + "tail").encode("utf-16-le")  # the pair straddles the 4,096-byte head
    wide = wide_encoding(data)
    assert wide is not None and wide.name == "UTF-16 LE" and wide.bom == b""


@pytest.mark.parametrize("text", [SOURCE * 20, CJK * 30, LATIN * 40, EMOJI * 30, CJK_HEADER])
def test_utf8_text_with_stray_nul_bytes_is_never_called_wide(text: str) -> None:
    """Read two or four bytes at a time, UTF-8 text pairs into CJK ideographs: however few ASCII
    characters or line breaks that leaves, it is binary, not UTF-16."""
    rng = random.Random(text)
    for _ in range(100):
        data = bytearray(text.encode())
        for _ in range(rng.randint(1, 3)):
            data.insert(rng.randrange(len(data) + 1), 0)
        assert wide_encoding(bytes(data)) is None, bytes(data[:40])


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
