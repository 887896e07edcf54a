"""Pure std functions whose output can be far larger than their input
(:mod:`vox_lang.runtime.stdlib_pure`): each is bounded by the size cap (``max_len``, R0006)
before it builds its result, never by the host's memory. A list may hold one long string many
times at the cost of one, and a lookahead group captures the rest of the text at every position."""

from __future__ import annotations

import pytest

from vox_lang.runtime import RunConfig, run_source

#: a 1,048,576-character string, and a list holding it 1,000 times
LONG = ('let mut s = "ab"\nwhile len(s) < 1000000 { s = s + s }\n'
        "let mut row: List[str] = []\nfor i in range(0, 1000) { row.push(s) }\n")


@pytest.mark.parametrize(("program", "what"), [
    ("import std.csv\n" + LONG + "print(len(csv.render([row]).unwrap_or(\"\")))\n", "str"),
    ("import std.path\n" + LONG + "print(len(path.join_many(row)))\n", "str"),
    ('import std.regex\nlet mut s = "ab"\nwhile len(s) < 100000 { s = s + s }\n'
     'match regex.compile("(?=(.*))") {\n  Ok(r) -> print(len(r.find_all(s)))\n  Error(e) -> print(e)\n}\n',
     "list of matches"),
], ids=["csv.render", "path.join_many", "regex.find_all"])
def test_output_past_the_size_cap_is_r0006(program: str, what: str) -> None:
    result = run_source(program, config=RunConfig(timeout_s=20))
    assert result.fault is not None and result.fault.code == "R0006", (result.status, result.output)
    assert result.fault.diagnostic.message == f"value too large: a {what} longer than 10,000,000 would exhaust memory"


def test_output_under_the_cap_is_unchanged() -> None:
    program = ('import std.csv\nimport std.path\nimport std.regex\nprint(csv.render([["a", "b,c"], ["d"]]))\n'
               'print(path.join_many(["a", "b", "c"]))\n'
               'match regex.compile("(?=(a+))") {\n  Ok(r) -> print(len(r.find_all("aaa")))\n'
               '  Error(e) -> print(e)\n}\n')
    result = run_source(program)
    assert result.status == "ok", result.fault
    assert result.output == 'Ok("a,\\"b,c\\"\\nd\\n")\na/b/c\n3\n'
