"""What a user request names: the items a program written for it must declare.

Users name what they want in backticks (issue 9): a signature (``late_orders(days: List[int],
limit: int) to int``), a type declaration (``type Answer = | Yes | No``) or a bare name introduced
by a kind word ("a function `greet`", "an actor `Greeter`", "a `Nav` view"). :func:`extract_request`
turns a request into a :class:`RequestSpec`; :func:`missing_items` lists what a program fails to
declare. The rules, in order, for each backticked span:

1. ``type NAME ...`` (or ``NAME = ...`` after the word "type") parses as a type declaration: kind
   ``type``, and the declaration is the required shape; ``type NAME { ... }`` (W0003) reads as the
   record it means, ``type NAME`` alone asks for the type by name.
2. ``NAME(params) [to T]`` whose params are all ``name: type`` (or none) parses as a function
   signature; ``to T`` is optional ("`is_even(n: int)` returning a bool" fixes only the params).
   Declaration words may stand before it (``pub async fn``, ``extern fn``, ``workflow``,
   ``activity``, ``on`` for a handler, ``component`` for the function it lowers to), and generics
   after the name (``first<T>(xs: List[T]) to T``, or ``first[T]``), which the signature keeps;
   ``actor NAME`` and ``fn NAME`` alone ask for the item by name
   (:mod:`vox_lang.request_spans`).
3. A bare ``NAME`` counts only with a kind word: the word right after the backticks ("a `Nav`
   view"), else a kind word before it in the same sentence with nothing but joiners, other
   backticked spans and a few prepositions between ("two activities, `collect` and `publish`";
   :data:`_KIND_JOINERS`). Without one it is ignored, so code fragments like `x` or `len`, and
   fields ("a function `top` that finds the largest `score`"), never become requirements.
4. A span listed after ``variants``/``cases``/``fields`` is a part of the type named before it,
   not an item; a requested type whose variants or fields are listed, in backticks or plain words,
   must have exactly those, in any order (:mod:`vox_lang.request_shapes`).
5. Without backticks, a name right after a kind word that cannot be English ("a function
   count_above that ...", "an actor named Greeter", "a struct Point") is asked for by name
   (:mod:`vox_lang.request_plain`).

Kind words: function/fn/tool/view/component/page → ``function``; workflow, activity, type (record,
struct, enum, alias), actor, handler. Prelude names, reserved words and call expressions with
untyped arguments (`ping(41)`) are never requirements; nor is a signature that names a parameter
twice (`f(x: int, x: int)`: no program can declare it). This module imports only from vox_lang.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from vox_lang import syntax
from vox_lang.diagnostics import DiagnosticSink
from vox_lang.lexer import KEYWORDS
from vox_lang.prelude import BUILTIN_TYPES, BUILTINS, CONSTRUCTORS, VIEW_ELEMENTS
from vox_lang.request_plain import plain_items
from vox_lang.request_shapes import ROLE_WORDS, listed_signature
from vox_lang.request_spans import read_span
from vox_lang.signatures import fn_signature, params_text, same_shape, type_signature
from vox_lang.source import SourceFile

if TYPE_CHECKING:
    from vox_lang.parser import TreeMemo

#: item kinds a request can ask for
KINDS: Final = ("function", "workflow", "activity", "type", "actor", "handler")

#: words that say what kind of item the next backticked name is (lower-case, singular and plural)
_KIND_WORDS: Final[dict[str, str]] = {
    **{w: "function" for w in ("function", "functions", "fn", "func", "tool", "tools", "view", "views",
                               "component", "components", "page", "pages", "helper", "procedure", "@mcp.tool")},
    **{w: "workflow" for w in ("workflow", "workflows")},
    **{w: "activity" for w in ("activity", "activities")},
    **{w: "type" for w in ("type", "types", "record", "records", "struct", "enum", "alias")},
    **{w: "actor" for w in ("actor", "actors")},
    **{w: "handler" for w in ("handler", "handlers")},
}
#: words that may sit between a kind word and its name without breaking the link
_JOINERS: Final = frozenset({"and", "or", "a", "an", "the", "two", "three", "named", "called", "vox", "sum",
                             "new", "public", "pub", "async", "simple", "small", "mcp", "plus"})
#: how many plain words back the form-word search looks
_LOOKBACK: Final = 4
#: what may stand between a kind word and the name it introduces: joiners, abbreviations and a
#: few prepositions ("an actor in Vox named `Tally`", "a type, i.e. `Shape`"); any other word breaks
#: the link, so "a function that finds the largest `score`" asks for no function `score` (a
#: field: 157 of 1,108 generated corpus prompts named such a word, which no answer declares)
_KIND_JOINERS: Final = _JOINERS | frozenset({"i.e.", "e.g.", "in", "for", "me", "us"})

_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_BACKTICK: Final = re.compile(r"`([^`\n]+)`")
#: a plain word (dotted names like ``@mcp.tool`` are one word, and so are the abbreviations
#: "e.g.", "i.e." and "etc.") or a punctuation mark; a full stop after a word ends the sentence
#: ("with fields. Print `x`"), it is not part of the word
_WORD: Final = re.compile(r"(?i:\be\.g\.|\bi\.e\.|\betc\.)|[@A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*|[.;:!?]")
_NOT_NAMES: Final = frozenset(KEYWORDS) | frozenset(BUILTIN_TYPES) | frozenset(BUILTINS) \
    | frozenset(CONSTRUCTORS) | frozenset(VIEW_ELEMENTS) | frozenset({"main", "std", "_", "set"})
#: names no program can declare (reserved words, prelude names, ``main``...): never a requirement
NOT_NAMES: Final = _NOT_NAMES


@dataclass(frozen=True, slots=True)
class RequestedItem:
    """One item a request names.

    Attributes:
        kind: one of :data:`KINDS` (``handler`` is a handler inside some actor).
        name: the item's name as written.
        signature: canonical text of the required shape, or ``None`` when only the name was given:
            ``(a: int, b: str) to int`` for functions/handlers (no ``to`` part when the request left
            the return type open), ``= { x: float }`` / ``= | A | B(x: int)`` for types.
        form: for a type named without its declaration, what the request's words say it is:
            ``record`` ("a record type `User`", "`Point` with fields ...") or ``sum`` ("a sum type",
            "an enum", "with variants ..."); ``None`` when they say neither or both. A hint for
            decoders (:func:`type_form`); :func:`missing_items` does not check it.
        renamable: the signature came from code pasted to be fixed (:mod:`vox_lang.pasted`): the
            fix may rename parameters, so only their number, order and types must match.
    """

    kind: str
    name: str
    signature: str | None = None
    form: str | None = None
    renamable: bool = False

    def describe(self) -> str:
        """``kind name`` plus the signature, for messages (e.g. ``function add(a: int) to int``)."""
        sig = self.signature or ""
        return f"{self.kind} {self.name}{' ' if sig.startswith('=') else ''}{sig}"


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """Everything a request names, in the order first named (no duplicates by kind and name)."""

    items: tuple[RequestedItem, ...] = ()

    @property
    def names(self) -> frozenset[str]:
        """Every requested name (a decoder may let the program refer to these before they exist)."""
        return frozenset(i.name for i in self.items)

    @property
    def functions(self) -> frozenset[str]:
        """The requested names whose kind is ``function``, ``workflow`` or ``activity``: values
        that are functions (a decoder may hold them to a call where one is needed before they exist)."""
        return frozenset(i.name for i in self.items if i.kind in ("function", "workflow", "activity"))

    @property
    def actors(self) -> frozenset[str]:
        """The requested names whose kind is ``actor`` (what ``spawn`` may take before it exists)."""
        return frozenset(i.name for i in self.items if i.kind == "actor")

    def __bool__(self) -> bool:
        return bool(self.items)


def _from_code(code: str, kind: str | None) -> RequestedItem | None:
    """Read one backticked span as a type declaration, a signature or a bare name (see module doc
    and :func:`vox_lang.request_spans.read_span`)."""
    found = read_span(code, kind, _NOT_NAMES)
    return RequestedItem(*found) if found is not None else None


#: the words that end a sentence for the kind-word and form-word searches
_SENTENCE_END: Final = frozenset(".;!?")


class _Prose:
    """A text's plain words (lower-case, backticked spans left out), read once so that each search
    back from a span costs a few steps, not a pass over everything before it: a request with
    thousands of backticked spans is read in linear time.

    Attributes:
        words: the words of :data:`_WORD` outside backticked spans, lower-case, in order.
        before: for the k-th backticked span, how many words come before it.
    """

    def __init__(self, text: str) -> None:
        self.words: list[str] = []
        self.before: list[int] = []
        pos = 0
        for m in _BACKTICK.finditer(text):
            self.words.extend(w.lower() for w in _WORD.findall(text, pos, m.start()))
            self.before.append(len(self.words))
            pos = m.end()
        self.words.extend(w.lower() for w in _WORD.findall(text, pos))
        self._prev: dict[tuple[int, int], list[int]] = {}  # per (table, skip) pair

    def nearest(self, end: int, table: dict[str, str], skip: frozenset[str], lookback: int = 4) -> str | None:
        """``table``'s value for the nearest of its words among the first ``end`` words (same
        sentence, within ``lookback`` words not in ``skip``), else ``None``."""
        key = (id(table), id(skip))
        prev = self._prev.get(key)
        if prev is None:  # prev[i]: the last word at or before i that is not only a skip word, or -1
            prev, last = [], -1
            for i, low in enumerate(self.words):
                if low in table or low not in skip:
                    last = i
                prev.append(last)
            self._prev[key] = prev
        seen = 0
        j = prev[end - 1] if end else -1
        while j >= 0:
            low = self.words[j]
            if low in _SENTENCE_END:
                return None
            if low in table:
                return table[low]
            seen += 1
            if seen > lookback:
                return None
            j = prev[j - 1] if j else -1
        return None


def _nearest_before(text: str, table: dict[str, str], skip: frozenset[str]) -> str | None:
    """``table``'s value for the nearest of its words at the end of ``text`` (backticked spans left
    out; same sentence, within :data:`_LOOKBACK` words not in ``skip``), else ``None``."""
    prose = _Prose(text)
    return prose.nearest(len(prose.words), table, skip)


#: words that say a requested type is a record or a sum type (lower-case; ``enum-like`` reads as ``enum``)
_FORM_WORDS: Final[dict[str, str]] = {
    **{w: "record" for w in ("record", "records", "struct", "structs", "field", "fields")},
    **{w: "sum" for w in ("sum", "enum", "enums", "variant", "variants")},
}
#: what the form-word search steps over: joiners and kind words ("a sum type `Light`")
_FORM_SKIP: Final = _JOINERS | frozenset(_KIND_WORDS)


def _form_after(after: str) -> str | None:
    """The one form the words at the start of ``after`` say, before the sentence or the next
    backticked span ends; ``None`` when they say neither or both."""
    found: set[str] = set()
    for word in _WORD.findall(after):
        if word in _SENTENCE_END:
            break
        if word.lower() in _FORM_WORDS:
            found.add(_FORM_WORDS[word.lower()])
    return found.pop() if len(found) == 1 else None


def type_form(before: str, after: str) -> str | None:
    """``record``/``sum`` for a type named in backticks, from the words around the name (``before``:
    the request up to the backticks, ``after``: from them on): the nearest form word within
    :data:`_LOOKBACK` words before it in the same sentence, else one after it before the sentence
    or the next backticked span ends. ``None`` when neither says, or the words after say both."""
    near = _nearest_before(before, _FORM_WORDS, _FORM_SKIP)
    return near if near is not None else _form_after(after.split("`", 1)[0])


def _kind_after(text: str) -> str | None:
    words = _WORD.findall(text[:40])
    return _KIND_WORDS.get(words[0].lower()) if words else None


#: how far after a type's name its listed variants or fields are read (a bounded window keeps
#: :func:`extract_request` linear)
_LIST_CHARS: Final = 600


def _in_parts_list(prose: _Prose, k: int) -> bool:
    """Whether the k-th backticked span is listed as a type's part: the nearest plain word before
    it, past ``and``/``or``/``:``, is a role word of :data:`vox_lang.request_shapes.ROLE_WORDS`."""
    j = prose.before[k] - 1
    for _ in range(_LOOKBACK):
        if j < 0:
            return False
        if prose.words[j] not in ("and", "or", ":"):
            return prose.words[j] in ROLE_WORDS
        j -= 1
    return False


def extract_request(text: str) -> RequestSpec:
    """Extract the items a request names (see the module docstring for the rules).

    Linear in the length of ``text``: the plain words are read once (:class:`_Prose`) and each
    span looks only at a few words around it.

    Args:
        text: the user's request (any text; never raises).

    Returns:
        A :class:`RequestSpec`; empty when the request names nothing.
    """
    items: list[RequestedItem] = []
    seen: set[tuple[str, str]] = set()
    prose = _Prose(text)
    for k, m in enumerate(_BACKTICK.finditer(text)):
        after = _kind_after(text[m.end(): m.end() + 40])
        kind = after if after is not None else prose.nearest(prose.before[k], _KIND_WORDS, _KIND_JOINERS, 0)
        if _in_parts_list(prose, k):
            continue  # a variant or field of a type named before it ("variants `Red`, `Green`")
        item = _from_code(m.group(1), kind)
        if item is not None and item.kind == "type" and item.signature is None:
            form = prose.nearest(prose.before[k], _FORM_WORDS, _FORM_SKIP)
            if form is None:
                tick = text.find("`", m.end())
                form = _form_after(text[m.end(): tick if tick >= 0 else len(text)])
            item = RequestedItem("type", item.name, listed_signature(item.name, text[m.end(): m.end() + _LIST_CHARS],
                                                                      form), form)
        if item is not None and (item.kind, item.name) not in seen:
            seen.add((item.kind, item.name))
            items.append(item)
    named = {item.name for item in items}
    for kind, name in plain_items(text, _NOT_NAMES):  # rule 5: a name without backticks
        if name not in named:
            named.add(name)
            items.append(RequestedItem(kind, name))
    return RequestSpec(tuple(items))


@dataclass(frozen=True, slots=True)
class _Declared:
    kind: str  # fn kind ("fn", "workflow", "activity"), "type", "actor" or "handler"
    name: str
    signature: str


def declared_items(module: syntax.Module) -> list[_Declared]:
    """Every item ``module`` declares, with canonical signatures (handlers included; a
    ``component`` as the function it lowers to)."""
    out: list[_Declared] = []
    for item in module.items:
        if isinstance(item, syntax.FnDecl):
            out.append(_Declared(item.kind, item.name, fn_signature(item.params, item.ret, True, item.generics)))
        elif isinstance(item, syntax.TypeDecl):
            out.append(_Declared("type", item.name, type_signature(item)))
        elif isinstance(item, syntax.ComponentDecl):  # lowers to ``fn Name(params) to Element`` (spec §10 U6)
            out.append(_Declared("fn", item.name, params_text(item.params) + " to Element"))
        elif isinstance(item, syntax.ActorDecl):
            out.append(_Declared("actor", item.name, ""))
            out.extend(_Declared("handler", h.name, fn_signature(h.params, h.ret)) for h in item.handlers)
    return out


def _matches(want: RequestedItem, have: _Declared) -> bool:
    if want.name != have.name:
        return False
    if want.kind == "function" and have.kind not in ("fn", "workflow", "activity"):
        return False
    if want.kind in ("workflow", "activity", "type", "actor", "handler") and have.kind != want.kind:
        return False
    if want.signature is None:
        return True
    if want.kind in ("type",):
        return same_shape(want.signature, have.signature)
    have_sig = have.signature
    if not want.signature.startswith("<") and have_sig.startswith("<"):  # generics the request leaves open
        have_sig = have_sig[have_sig.index(">") + 1:]
    want_sig = want.signature
    if want.renamable:
        want_sig, have_sig = _PARAM_NAME.sub(r"\1", want_sig), _PARAM_NAME.sub(r"\1", have_sig)
    # A signature without "to T" fixes only the parameters.
    if " to " in want_sig.rsplit(")", 1)[-1]:
        return want_sig == have_sig
    return have_sig.rsplit(")", 1)[0] + ")" == want_sig


#: a parameter's name in a canonical signature (``(a: int, b: str)``), dropped where names may differ
_PARAM_NAME: Final = re.compile(r"([(,]\s*)[A-Za-z_]\w*:\s*")


def missing_items(spec: RequestSpec, source: str | syntax.Module, trees: TreeMemo | None = None) -> list[str]:
    """Names of requested items the program does not declare (with the exact signature when given).

    Args:
        spec: from :func:`extract_request`.
        source: the program text (parsed here; items with syntax errors count as absent) or an
            already parsed :class:`vox_lang.syntax.Module`.
        trees: a parse memo shared with earlier calls on the same growing program
            (:class:`vox_lang.parser.TreeMemo`): its items already written are not matched again.

    Returns:
        The missing items' names, in request order; empty when everything asked for is declared.
    """
    if not spec.items:
        return []
    if isinstance(source, str):
        from vox_lang.parser import parse_module

        src = SourceFile(source, "<program>")
        source = parse_module(src, DiagnosticSink(src), trees)
    have = declared_items(source)
    return [want.name for want in spec.items if not any(_matches(want, h) for h in have)]


def requested_names(specs: Iterable[RequestSpec]) -> frozenset[str]:
    """Union of the names of several specs (e.g. every user turn of a conversation)."""
    return frozenset(n for s in specs for n in s.names)
