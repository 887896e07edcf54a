"""The canonical-layout cap of constrained decoding (pipeline.decoding_layout): at most one blank
line in a row inside a ```vox block (inside brackets too), comments of bounded length, prose free."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from pipeline.decoding_layout import MAX_COMMENT, LayoutState, LayoutTable, canonical_blank_lines, comment_length

TEXTS = ["a", "\n", "\n\n", "\n\n\n", " ", "  \n", "(", ")", "}\n\n", "}\n\n\n", "```", "```vox", "//", " word",
         "x\n\n\ny", "\"", "\n```"]


def ids(*pieces: str) -> list[int]:
    return [TEXTS.index(p) for p in pieces]


def allowed(state: LayoutState) -> set[str]:
    mask = state.mask(len(TEXTS))
    return set(TEXTS) if mask is None else {t for t, ok in zip(TEXTS, mask.tolist()) if ok}


def fed(*pieces: str, program: bool = False) -> LayoutState:
    state = LayoutState(LayoutTable.build(TEXTS), in_block=program)
    for i in ids(*pieces):
        state.feed(i)
    return state


def test_canonical_blank_lines_collapses_runs_only() -> None:
    assert canonical_blank_lines("a\n\n\n\nb\n  \n\t\nc\n\nd\ne") == "a\n\nb\n\nc\n\nd\ne"


def test_prose_is_free_and_blocks_are_capped() -> None:
    assert allowed(fed("\n", "\n", "\n")) == set(TEXTS)  # prose: nothing restricted
    one = allowed(fed("```vox", "\n"))
    assert "\n" in one and "\n\n" not in one and "}\n\n" in one and "}\n\n\n" not in one and "x\n\n\ny" not in one
    two = allowed(fed("```vox", "\n", "a", "\n", "  \n"))  # a whitespace-only line is blank
    assert "\n" not in two and "\n\n" not in two and "\n```" not in two
    assert {"a", "(", "```", " ", "//"} <= two
    # inside brackets too (L1); there a closer may start the line (not after `a`: line-start rule)
    assert allowed(fed("```vox", "\n", "(", "\n", "\n")) == two | {")"}
    assert "\n" in allowed(fed("```vox", "\n", "\n", "a"))  # a non-blank token resets the run
    assert allowed(fed("```vox", "\n", "a", "\n```", "\n", "\n", "\n")) == set(TEXTS)  # closed: prose again


def test_program_mode_is_one_block() -> None:
    assert "\n" not in allowed(fed("a", "\n\n", program=True))


def test_long_comments_must_end() -> None:
    state = fed("```vox", "\n", "//")
    while comment_length(state.line) < MAX_COMMENT:
        assert " word" in allowed(state)
        state.feed(TEXTS.index(" word"))
    assert allowed(state) == {"\n", "\n\n", "\n```", "\n\n\n"} - {"\n\n\n"}
    assert comment_length('print("// no") // yes') == len("// yes")
    assert comment_length('let s = "// in a string"') == 0


@pytest.mark.parametrize("seed", range(8))
def test_the_cap_holds_under_the_grammar_on_random_logits(seed: int) -> None:
    """Random scores through the real processor (grammar + cap): no block ever holds more than
    one blank line in a row, no comment outgrows the cap."""
    import torch

    from tests.pipeline.test_decoding_constraint import grammar, tokenizer

    tok = tokenizer()
    gen = torch.Generator().manual_seed(seed)
    proc = grammar().processor(rows=2, prompt_len=1, mode="code")
    ids_ = torch.zeros(2, 1, dtype=torch.long)
    newline = [i for i in range(len(tok)) if tok.decode([i]).strip(" \t") == "" and "\n" in tok.decode([i])]
    for _ in range(160):
        scores = torch.rand(2, len(tok), generator=gen)
        scores[:, newline] += 5.0  # a model that loves newlines
        out = proc(ids_, scores)
        ids_ = torch.cat([ids_, out.argmax(dim=1, keepdim=True)], dim=1)
    for row in range(2):
        text = tok.decode(ids_[row, 1:])
        body = text.split("```vox", 1)[1].split("```", 1)[0]
        assert not re.search(r"\n[ \t\r]*\n[ \t\r]*\n", body), text
        assert all(comment_length(line) < MAX_COMMENT + 12 for line in body.split("\n")), text
    assert not proc.report.fell_back


def allowed_after(texts: list[str]) -> Callable[..., set[str]]:
    """``after(*pieces)``: the texts of ``texts`` (a token table) the layout allows once ``pieces``
    (each one of ``texts``) are fed to a fresh state outside a block."""
    table = LayoutTable.build(texts)

    def after(*pieces: str) -> set[str]:
        state = LayoutState(table)
        for piece in pieces:
            state.feed(texts.index(piece))
        mask = state.mask(len(texts))
        assert mask is not None
        return {t for t, ok in zip(texts, mask.tolist()) if ok}

    return after


def test_runaway_words_and_strings_end() -> None:
    from pipeline.decoding_layout import MAX_STRING, MAX_WORD

    texts = ["```vox\n", "let s = ", "ab", " ", "\"", "\")", "(", "\n", "_tag", "// ab"]
    after = allowed_after(texts)
    word = ("_tag",) * (MAX_WORD // 4)
    assert "ab" in after("```vox\n", "let s = ", *word[:-1]) and "ab" not in after("```vox\n", "let s = ", *word)
    assert {"(", " ", "\n", "\"", "\")"} <= after("```vox\n", "let s = ", *word)  # anything that ends it
    string = ("ab",) * (MAX_STRING // 2)
    assert after("```vox\n", "let s = ", "\"", *string) == {"\"", "\")"}  # only a closing quote
    assert "ab" in after("```vox\n", "let s = ", "\"", *string[:-1])
    assert "ab" in after("```vox\n", "// ab", *("_tag",) * 20)  # in a comment only the comment cap applies


def test_runs_of_spaces_end() -> None:
    """`fn` then hundreds of spaces to the token limit (the default eval's cut E0203 blocks): a run
    of spaces and tabs on a line stops at MAX_SPACES, indentation included; strings and comments
    are not code."""
    from pipeline.decoding_layout import MAX_SPACES

    spaces = " " * 8
    texts = ["```vox\n", "fn", " ", spaces, "\t", "x", "\n", "\n  ", "\"", "// a"]
    after = allowed_after(texts)
    run = (spaces,) * (MAX_SPACES // 8)
    assert {" ", spaces, "\t"} <= after("```vox\n", "fn", *run[:-1])  # 24: room for 8 more
    assert " " in after("```vox\n", "fn", *run[:-1], " ") and spaces not in after("```vox\n", "fn", *run[:-1], " ")
    ended = after("```vox\n", "fn", *run)
    assert {" ", spaces, "\t", "\n  "} & ended == {"\n  "} and {"x", "\n", "\""} <= ended  # a newline ends it
    assert spaces not in after("```vox\n", "\n  ", *run) and "x" in after("```vox\n", "\n  ", *run)  # indentation
    assert spaces in after("```vox\n", "x", "\n", "x")  # a new line, a new run
    assert spaces in after("```vox\n", "\"", *run) and spaces in after("```vox\n", "// a", *run)  # text
    prose = LayoutState(LayoutTable.build(texts))
    for piece in ("fn", *run, *run):
        prose.feed(texts.index(piece))
    assert prose.mask(len(texts)) is None  # prose is free


def test_a_comment_is_never_glued_to_code() -> None:
    after = allowed_after(["```vox\n", "type T = bool", "//", " //", "l//", "/", "/ 2", "x", " ", "\"", "\"//", "\n",
                           "  "])
    code = after("```vox\n", "type T = bool")
    assert "//" not in code and "l//" not in code  # `bool//...`: the tiny model's derail into a comment
    assert {" //", "/", "/ 2", " "} <= code  # a spaced comment, division
    assert "/" not in after("```vox\n", "type T = bool", "/")  # `x/` then `/` would glue one too
    assert {"//", " //"} <= after("```vox\n", "type T = bool", " ")
    assert {"//", "/"} <= after("```vox\n") and "//" in after("```vox\n", "x", "\n", "  ")  # a line's start
    assert "l//" not in after("```vox\n")
    assert {"//", "\"//"} <= after("```vox\n", "x", " ", "\"")  # inside a string `//` is text
    assert "\"//" in after("```vox\n", "type T = bool", " ")  # a string that holds `//`


def test_a_block_holds_a_bounded_number_of_comment_lines() -> None:
    from pipeline.decoding_layout import MAX_COMMENT_LINES

    state = fed("```vox", "\n")
    for _ in range(MAX_COMMENT_LINES):
        assert "//" in allowed(state)
        for piece in ("//", " word", "\n"):
            state.feed(TEXTS.index(piece))
    assert "//" not in allowed(state) and "a" in allowed(state)
    state.feed(TEXTS.index("\""))
    assert "//" in allowed(state)  # inside a string, `//` is text


def test_backticks_in_a_comment_or_string_do_not_end_the_block() -> None:
    state = fed("```vox", "\n", "//", "```", "\n", "\n")
    assert state.in_block and "\n" not in allowed(state)
    state = fed("```vox", "\n", "\"", "```", "\"", "\n", "\n")
    assert state.in_block and "\n" not in allowed(state)


# --- line starts: the grammar models layout (L1-L3), so a continuation cannot open a separated line

#: strict-valid Vox (checked below) with every multi-line form the grammar must keep allowing
VALID_FORMS = '''\
type Shape =
  | Circle(r: float)
  | Square(s: float)
type Color = | Red
  | Green

routes {
  "/a" to home
  , "/b" to home
}

fn home() to Element {
  ret text(value="home")
}

@test
fn test_forms() {
  let x =
    1 + 2
  let ok = x > 1 and
    x < 10
  let p = { name: "a",
    size: 2 }
  let q = {
    name: "b"
    size: 3
  }
  let words = ["a", "b"]
    |> len
  let s = "a,b"
    .split(",")
  if ok {
    print(s)
  }
  else {
    print(p.name)
  }
  [1, 2]
  (x + 1)
  match x {
    -1 -> print("neg")
    _ -> print("other")
  }
  print(q.size + words)
  -1
}
'''

#: garbage the tiny model wrote under the constraint (eval completions), the refused line numbers
GARBAGE = [
    ("for v in xs {\n    if v.get(abos() >= 1.5) > true\n    > 10.0\n    > 3\n", [3, 4]),
    ("fn f(low: float) to bool {\n  ret low\n  == 0.0\n}\n", [3]),
    ("let x = 1\nx\n, breakiist()\n", [3]),
    ("\n ->(numb(3))\n", [2]),
    ("fn f() {\n  let y = x\n  // note\n\n  * 2\n}\n", [5]),  # comments and blank lines are skipped
    ("let s = \"a // b\"\n-= 1\n", [2]),
]


def test_valid_forms_are_strict_valid_and_never_refused() -> None:
    import vox_lang
    from tests.pipeline.test_decoding_constraint import accepted_prefix

    assert vox_lang.check(VALID_FORMS, strict=True).ok
    n, total, ok = accepted_prefix(f"```vox\n{VALID_FORMS}```", "code")  # grammar + layout, token by token
    assert ok, (n, total)


@pytest.mark.parametrize(("code", "lines"), GARBAGE)
def test_garbage_continuation_lines_are_refused(code: str, lines: list[int]) -> None:
    """By the grammar, at the first token of the offending line (real tokenizer)."""
    from tests.pipeline.test_decoding_constraint import grammar, tokenizer

    text = f"```vox\n{code}"
    ids_ = tokenizer().encode(text, add_special_tokens=False)
    n = grammar().matcher("code").validate_tokens(ids_)
    first = text.split("\n")[lines[0]]  # fence line + the first refused line
    offending = len("\n".join(text.split("\n")[:lines[0]])) + 1 + len(first) - len(first.lstrip())
    assert n < len(ids_)
    # refused at the line's first token (or the indent before it), its second after a lone `-` (of `-=`)
    assert offending - 1 <= len(tokenizer().decode(ids_[:n])) <= offending + 1




def test_lines_without_code_are_counted_until_a_line_has_code() -> None:
    state = fed("```vox", "\n", "a", "\n")
    assert state.idle_lines == 0
    for piece in ("//", " word", "\n", "  \n", "//", "\n", " ", "\n"):
        state.feed(TEXTS.index(piece))
    assert state.idle_lines == 4  # a comment line, a spaces-only line, a bare `//`, a space
    state.feed(TEXTS.index("a"))
    assert state.idle_lines == 4  # the line being written is not finished yet
    state.feed(TEXTS.index("\n"))
    assert state.idle_lines == 0
