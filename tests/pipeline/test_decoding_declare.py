"""The header forced for a requested item (pipeline.decoding_declare.header) is Vox, generics included."""

from __future__ import annotations

from pipeline.decoding_declare import header
from vox_lang.requests import extract_request
from vox_lang.signatures import parse_item


def test_a_generic_function_s_forced_header_declares_its_type_parameters() -> None:
    (item,) = extract_request("Write a Vox function `first[T](xs: List[T]) to T`").items
    forced = header(item)
    assert forced == "fn first<T>(xs: List[T]) to T {"
    assert parse_item(forced + " ret xs[0] }") is not None
