"""Preflight repair pairs: a valid program broken in one of :data:`BREAKS` kinds.

The prompt shows the broken program and its diagnostics in the repair format
(``Line X, Col Y: error[CODE] message (hint: ...)``); the response names the fault and gives
the fixed (original) program. Each kind declares the code the broken program must raise; the
compiler gate re-checks both directions.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from pipeline.generators.base import fenced, pick

#: a break returns the broken program, or None when the kind does not apply to this program
Breaker = Callable[[str, random.Random], "str | None"]


@dataclass(frozen=True)
class BreakKind:
    """One way to break a program: ``name``, the ``code`` it must raise, the fault explained,
    and a sampling ``weight`` (kinds that apply to few programs get more, to balance the mix)."""

    name: str
    code: str
    explain: str
    apply: Breaker
    weight: float = 1.0


def _lines(code: str) -> list[str]:
    return code.split("\n")


def _choose(rng: random.Random, idxs: list[int]) -> int | None:
    return rng.choice(idxs) if idxs else None


def _unclosed_brace(code: str, rng: random.Random) -> str | None:
    ls = _lines(code)
    idx = [i for i, ln in enumerate(ls) if ln == "}"]
    i = _choose(rng, idx)
    return None if i is None else "\n".join(ls[:i] + ls[i + 1:])


_KEYWORD_TYPOS: Final = {"ret ": ("retrun ", "retn "), "let ": ("lett ", "le "), "while ": ("whlie ",), "for ": ("fro ",)}


def _misspelled_keyword(code: str, rng: random.Random) -> str | None:
    ls = _lines(code)
    cands = [(i, kw) for i, ln in enumerate(ls) for kw in _KEYWORD_TYPOS
             if ln.lstrip().startswith(kw) and not (kw == "ret " and ln.strip() == "ret")]
    if not cands:
        return None
    i, kw = rng.choice(cands)
    ls[i] = ls[i].replace(kw, rng.choice(_KEYWORD_TYPOS[kw]), 1)
    return "\n".join(ls)


_FN_HEAD = re.compile(r"^(\s*(?:pub )?(?:async )?(?:fn|activity|workflow) \w+(?:<[^>]*>)?\(.*\)) to (.+) \{$")


def _arrow_return(code: str, rng: random.Random) -> str | None:
    ls = _lines(code)
    i = _choose(rng, [i for i, ln in enumerate(ls) if _FN_HEAD.match(ln)])
    if i is None:
        return None
    ls[i] = _FN_HEAD.sub(r"\1 -> \2 {", ls[i])
    return "\n".join(ls)


def _missing_ret(code: str, rng: random.Random) -> str | None:
    """Drop the final ``ret`` of a top-level non-Unit function (its last body line)."""
    ls = _lines(code)
    idx = [i for i in range(1, len(ls)) if ls[i] == "}" and re.match(r"^  ret \S", ls[i - 1])
           and _enclosing_fn_returns(ls, i)]
    i = _choose(rng, idx)
    if i is None:
        return None
    ls[i - 1] = "  " + ls[i - 1][len("  ret "):]
    return "\n".join(ls)


def _enclosing_fn_returns(ls: list[str], close: int) -> bool:
    for j in range(close - 1, -1, -1):
        if ls[j] and not ls[j].startswith(" "):
            return bool(_FN_HEAD.match(ls[j]))
    return False


_TYPE_TYPOS: Final = {"int": ("integer", "Int", "i32"), "str": ("string", "String"), "float": ("double", "f64"),
                      "bool": ("boolean", "Bool")}


def _wrong_type_name(code: str, rng: random.Random) -> str | None:
    spots = [m for m in re.finditer(r"(?<=: )(int|str|float|bool)\b(?!\()", code)]
    if not spots:
        return None
    m = rng.choice(spots)
    return code[: m.start()] + rng.choice(_TYPE_TYPOS[m.group(1)]) + code[m.end():]


def _return_mismatch(code: str, rng: random.Random) -> str | None:
    """``ret n`` in a function returning int/float becomes ``ret str(n)``."""
    ls = _lines(code)
    fn_ty: str | None = None
    cands: list[int] = []
    for i, ln in enumerate(ls):
        m = _FN_HEAD.match(ln)
        if m and not ln.startswith(" "):
            fn_ty = m.group(2)
        elif ln and not ln.startswith(" "):
            fn_ty = None
        if fn_ty in ("int", "float") and re.match(r"^\s+ret [^{}]+$", ln) and "ret str(" not in ln:
            cands.append(i)
    hit = _choose(rng, cands)
    if hit is None:
        return None
    head, expr = ls[hit].split("ret ", 1)
    ls[hit] = f"{head}ret str({expr})"
    return "\n".join(ls)


def _operator_mismatch(code: str, rng: random.Random) -> str | None:
    spots = [m for m in re.finditer(r" \+=? 1(?![\d.])", code) if not _in_string(code, m.start())]
    if not spots:
        return None
    m = rng.choice(spots)
    return code[: m.start()] + m.group(0).replace("1", "\"1\"") + code[m.end():]


def _unwrapped_option(code: str, rng: random.Random) -> str | None:
    spots = list(re.finditer(r"^(\s+ret .+?)\.unwrap_or\([^()]*\)$", code, flags=re.M))
    if not spots:
        return None
    m = rng.choice(spots)
    return code[: m.start()] + m.group(1) + code[m.end():]


_CALL = re.compile(r"\b([a-z]\w*)\(([^()\n]*,[^()\n]*)\)")
_DECL = re.compile(r"^(?:pub )?(?:async )?(?:fn|activity|workflow) (\w+)(?:<[^>]*>)?\(([^)]*)\)", re.M)


def _in_string(code: str, pos: int) -> bool:
    """True when ``pos`` lies inside a string literal (strings never span lines)."""
    line = code[code.rfind("\n", 0, pos) + 1: pos]
    return len(re.findall(r'(?<!\\)"', line)) % 2 == 1


def _wrong_arity(code: str, rng: random.Random) -> str | None:
    """Drop the last argument of a call to a user function without defaulted parameters."""
    decls = {m.group(1) for m in _DECL.finditer(code) if "=" not in m.group(2)}
    spots = []
    for m in _CALL.finditer(code):
        before = code[code.rfind("\n", 0, m.start()) + 1: m.start()]
        args = m.group(2)
        if (m.group(1) in decls and not re.search(r"\b(fn|activity|workflow) $", before)
                and not _in_string(code, m.start())
                and not set(args) & set("[]{}")
                and re.sub(r'"[^"]*"', '""', args).count(",") == args.count(",")):
            spots.append(m)
    if not spots:
        return None
    m = rng.choice(spots)
    return code[: m.start()] + f"{m.group(1)}({m.group(2).rsplit(',', 1)[0]})" + code[m.end():]


def _sub(pattern: str, repl: str) -> Breaker:
    """A breaker replacing one match of ``pattern`` (outside string literals) by ``repl``."""
    def apply(code: str, rng: random.Random) -> str | None:
        spots = [m for m in re.finditer(pattern, code, re.M) if not _in_string(code, m.start())]
        if not spots:
            return None
        m = rng.choice(spots)
        return code[: m.start()] + m.expand(repl) + code[m.end():]
    return apply


def _hash_comment(code: str, rng: random.Random) -> str | None:
    if re.search(r"^\s*// ", code, re.M):
        return _sub(r"^(\s*)// ", r"\1# ")(code, rng)
    ls = _lines(code)
    i = _choose(rng, [i for i, ln in enumerate(ls) if ln.startswith(("fn ", "type ", "let "))])
    if i is None:
        return None
    return "\n".join(ls[:i] + [f"# {pick(rng, 'helper', 'main logic', 'setup')}"] + ls[i:])


def _colon_block(code: str, rng: random.Random) -> str | None:
    """Rewrite one braced block header as a legacy colon block (dropping its closing brace)."""
    ls = _lines(code)
    cands = []
    for i, ln in enumerate(ls):
        ind = len(ln) - len(ln.lstrip())
        if re.match(r"^\s*(fn|if|for|while) .*\{$", ln):
            for j in range(i + 1, len(ls)):
                if ls[j].strip() and len(ls[j]) - len(ls[j].lstrip()) <= ind:
                    if ls[j] == " " * ind + "}":
                        cands.append((i, j))
                    break
    if not cands:
        return None
    i, j = rng.choice(cands)
    ls[i] = ls[i][:-2].rstrip() + ":"
    return "\n".join(ls[:j] + ls[j + 1:])


def _non_exhaustive(code: str, rng: random.Random) -> str | None:
    """Remove one single-line constructor arm from a ``match`` that has no ``_`` arm."""
    ls = _lines(code)
    cands: list[int] = []
    for i, ln in enumerate(ls):
        if not re.search(r"\bmatch .*\{$", ln):
            continue
        ind = len(ln) - len(ln.lstrip())
        arms = []
        for j in range(i + 1, len(ls)):
            if ls[j] == " " * ind + "}":
                break
            if len(ls[j]) - len(ls[j].lstrip()) == ind + 2:
                arms.append(j)
        pats = [ls[a].strip().split(" -> ")[0] for a in arms]
        if len(arms) >= 2 and all(re.fullmatch(r"[A-Z]\w*(\(.*\))?", p) for p in pats):
            cands += [a for a in arms if not ls[a].rstrip().endswith("{")]
    a = _choose(rng, cands)
    return None if a is None else "\n".join(ls[:a] + ls[a + 1:])


def _semicolon(code: str, rng: random.Random) -> str | None:
    ls = _lines(code)
    simple = re.compile(r"^\s*(let |print\()")
    idx = [i for i in range(len(ls) - 1) if simple.match(ls[i]) and simple.match(ls[i + 1])
           and len(ls[i]) - len(ls[i].lstrip()) == len(ls[i + 1]) - len(ls[i + 1].lstrip())]
    i = _choose(rng, idx)
    if i is None:
        return None
    return "\n".join(ls[:i] + [ls[i] + "; " + ls[i + 1].lstrip()] + ls[i + 2:])


def _undefined_name(code: str, rng: random.Random) -> str | None:
    """Misspell one later use of a ``let`` binding (drop one inner letter)."""
    names = {m.group(1) for m in re.finditer(r"\blet (?:mut )?([a-z][a-z_]{3,})\b", code)}
    words = set(re.findall(r"\b\w+\b", code))
    cands = []
    for n in sorted(names):
        uses = [m for m in re.finditer(rf"\b{n}\b", code) if not _in_string(code, m.start())]
        typo = n[:2] + n[3:]
        if len(uses) >= 2 and typo not in words:
            cands += [(m, typo) for m in uses[1:] if not re.search(r"(\.|\")$", code[: m.start()])]
    if not cands:
        return None
    m, typo = rng.choice(cands)
    return code[: m.start()] + typo + code[m.end():]


def _immutable_assign(code: str, rng: random.Random) -> str | None:
    return _sub(r"\blet mut (\w+) = ", r"let \1 = ")(code, rng)


BREAKS: Final[tuple[BreakKind, ...]] = (
    BreakKind("unclosed_brace", "E0203", "a block is opened with `{` but never closed", _unclosed_brace),
    BreakKind("misspelled_keyword", "E0201", "a keyword is misspelled, so the line does not parse", _misspelled_keyword),
    BreakKind("arrow_return", "E0308", "the return type uses `->`; Vox writes the return type after `to`", _arrow_return),
    BreakKind("missing_ret", "E0508", "the function's last line computes a value but never returns it with `ret`", _missing_ret, weight=2.0),
    BreakKind("wrong_type_name", "E0403", "a type name is not a Vox type; the built-in types are `int float str bool`", _wrong_type_name),
    BreakKind("return_mismatch", "E0507", "the function returns a `str` where its declared return type is numeric", _return_mismatch, weight=6.0),
    BreakKind("operator_mismatch", "E0510", "a string is added to a number; `+` needs two numbers or two strings", _operator_mismatch, weight=6.0),
    BreakKind("unwrapped_option", "E0507", "`get`/`env.get` give an Option, which must be unwrapped with `unwrap_or` before it is returned", _unwrapped_option, weight=6.0),
    BreakKind("wrong_arity", "E0503", "a function is called with too few arguments", _wrong_arity, weight=6.0),
    BreakKind("err_constructor", "E0310", "`Err` is retired; failures are built with `Error(...)`", _sub(r"\bError\(", "Err("), weight=6.0),
    BreakKind("hash_comment", "E0304", "`#` comments are retired; Vox comments start with `//`", _hash_comment),
    BreakKind("colon_block", "E0301", "a block is written in the retired colon style; Vox blocks use braces", _colon_block),
    BreakKind("non_exhaustive_match", "E0515", "the `match` leaves a variant unhandled; every case needs an arm", _non_exhaustive, weight=6.0),
    BreakKind("semicolon", "E0309", "two statements are joined with `;`; Vox writes one statement per line", _semicolon, weight=2.0),
    BreakKind("undefined_name", "E0401", "a variable name is misspelled, so it refers to nothing", _undefined_name, weight=2.0),
    BreakKind("immutable_assign", "E0509", "a variable that is changed later is declared without `mut`", _immutable_assign, weight=6.0),
    BreakKind("bang_not", "E0311", "`!` is not an operator in Vox; negation is `not`", _sub(r"\bnot ", "!"), weight=6.0),
    BreakKind("and_and", "E0312", "`&&` is retired; Vox writes `and`", _sub(r" and ", " && "), weight=6.0),
    BreakKind("isnt", "E0306", "`isnt` is retired; compare with `!=`", _sub(r" != ", " isnt "), weight=6.0),
    BreakKind("null", "E0314", "`null` does not exist in Vox; an absent value is `None`", _sub(r"\bNone\b", "null"), weight=6.0),
    BreakKind("arm_to", "E0307", "a match arm uses `to`; arms are written with `->`", _sub(r"^(\s+[A-Z_][\w()_, ]*) -> ", r"\1 to "), weight=2.0),
)

BREAK_BY_NAME: Final = {b.name: b for b in BREAKS}


def ordered_kinds(rng: random.Random) -> list[BreakKind]:
    """All kinds in a weighted random order (Efraimidis-Spirakis keys ``u ** (1 / weight)``)."""
    return sorted(BREAKS, key=lambda k: rng.random() ** (1.0 / k.weight), reverse=True)


def break_program(code: str, kind: BreakKind, rng: random.Random) -> str | None:
    """Apply ``kind`` to ``code``; ``None`` if the kind does not apply or changes nothing."""
    broken = kind.apply(code, rng)
    return broken if broken and broken != code else None


_ASK_REPAIR: Final = (
    "This Vox program does not compile. Fix it.",
    "The compiler rejects my Vox code. What is wrong?",
    "Please repair this Vox program.",
    "Why does this fail to compile, and what is the fix?",
)


def repair_prompt(rng: random.Random, broken: str, diagnostics: str) -> str:
    """The user turn: the broken program and its repair-format diagnostics."""
    return f"{rng.choice(_ASK_REPAIR)}\n\n{fenced(broken)}\n\nCompiler output:\n```text\n{diagnostics}\n```"


def repair_response(kind: BreakKind, diagnostics: str, fixed: str) -> str:
    """The assistant turn: the fault in one sentence, then the whole fixed program."""
    hit = next((ln for ln in diagnostics.split("\n") if f"[{kind.code}]" in ln), "")
    where = hit.split(":", 1)[0] if hit.startswith("Line ") else "The program"
    return f"{where}, {kind.code}: {kind.explain}. Fixed program:\n\n{fenced(fixed)}"
