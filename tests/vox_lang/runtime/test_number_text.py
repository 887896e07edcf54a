"""``int(s)`` and ``float(s)`` (spec §5, §11): what a number text is, as a table. Text that is
not one is R0009: no surrounding whitespace, no other spelling of infinity; every text ``str``
writes for a float reads back (new-user trial: ``int(" 12 ")`` gave 12, ``float("Infinity")`` R0009
while ``float("nan")`` passed)."""

from __future__ import annotations

import math

import pytest

from vox_lang.runtime import run_source

INTS = [("12", 12), ("-12", -12), ("+7", 7), ("007", 7), ("0", 0), ("9223372036854775807", 2**63 - 1)]
FLOATS = [("1.5", 1.5), ("-0.25", -0.25), ("3", 3.0), ("1.", 1.0), (".5", 0.5), ("2.5e-07", 2.5e-07),
          ("1e+20", 1e20), ("1E3", 1000.0), ("+2.0", 2.0), ("inf", math.inf), ("-inf", -math.inf),
          ("+inf", math.inf)]
NOT_INTS = [" 12 ", "12 ", " 12", "\t12", "12\n", "", "-", "1.0", "1e3", "1_000", "0x10", "١٢", "12a", "inf"]
NOT_FLOATS = [" 1.5", "1.5 ", "\n1.5", "", ".", "e3", "1e", "1_0.0", "Infinity", "infinity", "INF", "NaN",
              "NAN", "-Infinity", "0x1p3", "1.5f", "١.٥", "nan "]
HINTS = {" 12 ": "`int(s.trim())`", " 1.5": "`float(s.trim())`", "nan ": "`float(s.trim())`",
         "Infinity": "`inf`, `-inf` and `nan`", "NaN": "`inf`, `-inf` and `nan`"}


def _run(call: str) -> tuple[str, str | None, str | None]:
    result = run_source(f"print({call})\n")
    if result.fault is None:
        return result.output.rstrip("\n"), None, None
    return "", result.fault.code, result.fault.diagnostic.hint


def quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t") + '"'


@pytest.mark.parametrize(("text", "value"), INTS)
def test_int_reads_number_text(text: str, value: int) -> None:
    assert _run(f"int({quoted(text)})") == (str(value), None, None)


@pytest.mark.parametrize(("text", "value"), FLOATS)
def test_float_reads_number_text(text: str, value: float) -> None:
    out, code, _ = _run(f"float({quoted(text)})")
    assert code is None and float(out) == value


def test_nan_reads_back() -> None:
    assert _run('float("nan")')[:2] == ("nan", None)


@pytest.mark.parametrize("text", NOT_INTS)
def test_int_of_other_text_is_r0009(text: str) -> None:
    out, code, hint = _run(f"int({quoted(text)})")
    assert code == "R0009", text
    if text in HINTS:
        assert hint is not None and HINTS[text] in hint


@pytest.mark.parametrize("text", NOT_FLOATS)
def test_float_of_other_text_is_r0009(text: str) -> None:
    out, code, hint = _run(f"float({quoted(text)})")
    assert code == "R0009", text
    if text in HINTS:
        assert hint is not None and HINTS[text] in hint


@pytest.mark.parametrize("value", ["0.1", "2.5e-07", "1e+20", "-inf", "inf", "nan", "-0.0", "123456789.125"])
def test_every_float_text_str_writes_reads_back(value: str) -> None:
    assert _run(f"str(float(str(float({quoted(value)}))))")[:2] == (value, None)
