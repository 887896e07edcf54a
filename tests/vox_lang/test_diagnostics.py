"""The three renderings of spec §6 on real front-end output, and diagnostic ordering."""

from __future__ import annotations

import json

import pytest

import vox_lang

SRC = "fn f() to int {\n  return 1\n}\nlet x = 3 $ 4\n\tlet s = \"a\\qb\"\n"


def test_human_rendering() -> None:
    result = vox_lang.check(SRC, path="shop.vox")
    assert result.render("human") == "\n".join([
        "shop.vox:2:3: warning[W0001]: `return` is a compat spelling",
        "2 |   return 1",
        "  |   ^^^^^^",
        "hint: fix: `ret`",
        "shop.vox:4:11: error[E0101]: unknown character `$`",
        "4 | let x = 3 $ 4",
        "  |           ^",
        "hint: delete it",
        "shop.vox:5:12: error[E0103]: invalid escape `\\q`",
        '5 | \tlet s = "a\\qb"',
        "  | \t          ^^",
        'hint: use \\n \\t \\\\ \\"',
    ])


def test_repair_rendering_and_strict_mode() -> None:
    result = vox_lang.check(SRC, strict=True)
    assert result.render("repair").splitlines() == [
        "Line 2, Col 3: error[W0001] `return` is a compat spelling (hint: fix: `ret`)",
        "Line 4, Col 11: error[E0101] unknown character `$` (hint: delete it)",
        'Line 5, Col 12: error[E0103] invalid escape `\\q` (hint: use \\n \\t \\\\ \\")',
    ]


def test_json_rendering() -> None:
    data = json.loads(vox_lang.check("let n = 1  # one\n").render("json"))
    assert data == [{
        "code": "E0304", "severity": "error", "message": "retired syntax: `#` comment",
        "line": 1, "col": 12, "end_line": 1, "end_col": 13, "hint": "use `//`", "fix": "//",
    }]


def test_retired_messages_and_hints() -> None:
    result = vox_lang.check('fn main():\n  print(1)\n@component\nfn Card() { }\nlet v = <p>x</p>\n')
    assert [(d.code, d.message, d.hint) for d in result.diagnostics] == [
        ("E0301", "retired syntax: colon block after `fn`", "use braces: `fn … { … }`"),
        ("E0303", "retired syntax: decorator `@component`", "write `fn Name() to Element`"),
        ("E0305", "retired syntax: angle-bracket markup", "use a view call: `column(gap=1) { … }`"),
    ]


def test_w0003_hint_and_fix() -> None:
    (d,) = vox_lang.check("type P { a: int }\n").diagnostics
    assert (d.code, d.col, d.end_col, d.hint, d.fix) == ("W0003", 8, 9, "fix: `{` → `= {`", "= {")


def test_sorted_by_position_then_code() -> None:
    result = vox_lang.check("let a = 1 && 2 $\n")
    assert [(d.line, d.col, d.code) for d in result.diagnostics] == [(1, 11, "E0312"), (1, 16, "E0101")]


def test_find_retired_lists_only_e03() -> None:
    found = vox_lang.find_retired("let n = null  # x\nfn f() { return }\n")
    assert [d.code for d in found] == ["E0314", "E0304"]  # by position


def test_human_rendering_never_echoes_control_characters() -> None:
    # An ANSI escape in a checked file must not reach the terminal; carets stay aligned.
    result = vox_lang.check("let x = 1\x1b[2J + 2\n", path="t.vox")
    human = result.render("human")
    assert "\x1b" not in human
    assert human.splitlines()[1:3] == ["1 | let x = 1\u241b[2J + 2", "  |          ^"]


# --------------------------------------------------------------------------- huge lines


def _shown(rendered: str) -> tuple[str, str]:
    """The echoed source line and the caret line of a one-diagnostic human rendering."""
    lines = rendered.splitlines()
    return lines[1].split(" | ", 1)[1], lines[2].split(" | ", 1)[1]


@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_a_10000_character_line_is_cut_around_the_caret(where: str) -> None:
    from vox_lang.diagnostics import EXCERPT_WIDTH

    filler = "x + " * 2500
    src = {
        "start": "$ " + filler + "1\n",
        "middle": "let a = " + filler[:5000] + "$ + " + filler[:5000] + "1\n",
        "end": "let a = " + filler + "1 $\n",
    }[where]
    result = vox_lang.check(src)
    (d,) = result.diagnostics
    assert d.code == "E0101"
    text, carets = _shown(result.render("human"))
    assert len(text) <= EXCERPT_WIDTH + 2  # the window and at most two `…`
    assert carets.strip() == "^"
    assert text[len(carets) - 1] == "$"  # the caret still sits under the `$`
    assert text.startswith("…") == (where != "start")
    assert text.endswith("…") == (where != "end")
    assert len(result.render("human")) < 600


def test_multibyte_characters_keep_the_caret_aligned() -> None:
    src = 'let s = "' + "漢é" * 3000 + '" + 1 $\n'
    result = vox_lang.check(src)
    (d,) = result.diagnostics
    text, carets = _shown(result.render("human"))
    dollar = text.index("$")  # in terminal cells: each 漢 takes two (test_carets_line_up_under_wide_characters)
    assert len(carets) - 1 == dollar + sum(ch == "漢" for ch in text[:dollar])
    assert text.startswith("…") and not text.endswith("…")


def test_a_long_span_gets_carets_only_inside_the_window() -> None:
    src = "let v = " + "1" * 10_000 + "a\n"
    result = vox_lang.check(src)
    (d,) = result.diagnostics
    assert d.code == "E0104" and d.end_col - d.col == 10_001
    text, carets = _shown(result.render("human"))
    assert set(carets.strip()) == {"^"} and len(carets) <= len(text)
    # the message field is clipped too, in every rendering
    assert len(d.message) < 200 and "…" in d.message
    assert len(result.render("repair")) < 300 and len(result.render("json")) < 500


def test_short_lines_are_echoed_whole() -> None:
    from vox_lang.diagnostics import excerpt

    assert excerpt("let x = 1", 5, 1) == ("let x = 1", 5, 1)
    shown, col, width = excerpt("a" * 500, 501, 1)  # a caret just past the end of the line
    assert shown.startswith("…") and col == len(shown) + 1 and width == 1


def test_a_1_mb_single_line_file_shows_a_window_at_the_right_column() -> None:
    # one line of 1 MB (ending in a newline): the `$` sits half a megabyte in
    src = 'let a = "' + "a" * 500_000 + '" $ "' + "b" * 500_000 + '"\n'
    result = vox_lang.check(src, path="big.vox")
    (d,) = result.diagnostics
    assert (d.code, d.line, d.col) == ("E0101", 1, src.index("$") + 1)
    human = result.render("human")
    assert human.splitlines()[0] == f"big.vox:1:{d.col}: error[E0101]: unknown character `$`"
    text, carets = _shown(human)
    assert len(text) <= 122 and text.startswith("…") and text.endswith("…")
    assert carets.strip() == "^" and text[len(carets) - 1] == "$"
    assert len(human) < 600


def test_many_diagnostics_on_one_long_line_each_echo_their_own_window() -> None:
    from vox_lang.diagnostics import excerpt

    src = "let x = 3 $ 4 " * 2000 + "\n"  # 28 KB, 2,000 E0101s on line 1
    result = vox_lang.check(src)
    assert len(result.diagnostics) == 2000
    blocks = result.render("human").split("\n")
    line = src.rstrip("\n")
    for i, d in enumerate(result.diagnostics):
        shown, col, width = excerpt(line, d.col, max(1, d.end_col - d.col))  # the whole line, cut
        assert blocks[4 * i + 1] == f"1 | {shown}"
        assert blocks[4 * i + 2] == f"  | {' ' * (col - 1)}{'^' * width}"
        assert shown[col - 1] == "$"


def test_a_line_of_carriage_returns_renders_each_diagnostic() -> None:
    # every `\r` but the one before `\n` is an E0101; the line echoed is empty (a line's
    # trailing `\r`s go with its terminator; carets are padded by the characters shown), and
    # its end is found once, not once per diagnostic
    result = vox_lang.check("\r" * 5000 + "\n")
    assert len(result.diagnostics) == 4999
    lines = result.render("human").splitlines()
    assert len(lines) == 4 * 4999
    assert set(lines[1::4]) == {"1 | "} and set(lines[2::4]) == {"  | ^"}


def test_carets_line_up_under_wide_characters() -> None:
    """A new-user trial: carets under a CJK string were half as wide as it, and any after it
    stood too far left (a terminal shows 名 in two cells)."""
    from vox_lang.runtime import run_source

    lines = vox_lang.check('let s = "名前" + 1\n', path="w.vox").render("human").splitlines()
    assert lines[2] == "  |         ^^^^^^"  # E0510 on the string: 2 quotes + 2 x 2 cells
    lines = vox_lang.check('let s = "名前" + 1 $\n', path="w.vox").render("human").splitlines()
    assert lines[2] == "  |                    ^"  # the `$` after it (E0103)
    src = 'let s = "名前"\nprint("名" + s[9])\n'
    res = run_source(src, path="r.vox")
    assert res.fault is not None
    assert res.fault.render("human", res.check.source).splitlines()[2] == "  |              ^^^^"


def test_a_runtime_fault_on_a_long_line_shows_a_window() -> None:
    from vox_lang.runtime import run_source

    src = "print(" + " + ".join(["1"] * 20_000) + " + 1 / 0)\n"
    res = run_source(src, path="r.vox")
    assert res.fault is not None
    lines = res.fault.render("human", res.check.source).splitlines()
    col = src.index("1 / 0") + 1
    assert lines[0] == f"r.vox:1:{col}: runtime error[R0003]: division by zero"
    text, carets = lines[1].split(" | ", 1)[1], lines[2].split(" | ", 1)[1]
    assert len(text) <= 122 and text.startswith("…") and text.endswith("1 / 0)")
    assert carets.strip() == "^^^^^" and text[len(carets) - 5 : len(carets)] == "1 / 0"
