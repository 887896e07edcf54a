"""What a chat message asks for: Vox code to be written, or an answer in prose.

:func:`is_vox_request` decides whether ``vox chat`` checks the answer as Vox (system prompt,
verdict, repairs); :func:`is_question` whether a follow-up in a Vox conversation only asks
something; :func:`refuses_code` whether the user said not to write code. A question is read from
its first word (or the first word after an opening phrase, when the text ends with ``?``):
a question word with or without a contraction's apostrophe ("whats", "hows") or misspelt by
one letter ("wat", "wht", "hw", "waht": :func:`is_question_word`). No I/O, no state.
"""

from __future__ import annotations

import re
from typing import Final

_VOX: Final = re.compile(r"\bvox\b|\.vox\b|```vox", re.IGNORECASE)
_VOX_ACTION: Final = re.compile(
    r"\b(write|create|generate|make|build|implement|fix|repair|port|convert|translate|rewrite|"
    r"code|script|program|function|fn|actor|workflow|routes?|type)\b", re.IGNORECASE)
#: a backticked signature in Vox's own syntax, its return type after ``to`` (spec §2: ``fn f(x: int)
#: to int``; Python, Rust and TypeScript write ``->`` or ``:``): `is_adult(u: User) to bool`
_VOX_SIGNATURE: Final = re.compile(
    r"`(?:fn\s+)?[A-Za-z_]\w*\s*\([^`()]*(?:\([^`()]*\)[^`()]*)*\)\s+to\s+[^`\s][^`]*`")

#: a question word spelt right, with or without a contraction's apostrophe ("what's", "Whats",
#: "doesnt", "cant"); not "don't", which mostly opens an instruction
_QWORD: Final = re.compile(
    r"(?:(?:what|wat|how|where|why|who|when)(?:s|re|d)?|which|whose"
    r"|(?:is|are|was|were|does|did|could|should|would)(?:nt)?|do|can(?:t|not)?)", re.IGNORECASE)
#: the question words a one-letter slip is read back to ("wht", "waht", "hw", "wen", "wich")
_FUZZY_BASES: Final = ("what", "where", "when", "which", "why", "how")
#: words one letter from a question word that are words of their own, and open other sentences
_NOT_QUESTION_WORDS: Final = frozenset({
    "way", "wheat", "whet", "whey", "whit", "whim", "whip", "whiz", "wit", "wash", "wish", "witch", "winch",
    "ho", "hot", "hop", "hoe", "hog", "hoy", "hoo", "hob", "hod", "hon", "hos", "hew", "haw", "hoc", "hol",
    "wen", "hen", "wren", "whew", "wend", "went", "wee", "wham", "whom", "whoa", "wry", "shy", "thy"})
#: a word, apostrophes inside it included ("what's", "what\u2019s")
_WORD_AT: Final = re.compile(r"[A-Za-z]+(?:['\u2019][A-Za-z]+)?")
#: where a question's first word stands: the start of the text, or after an opening phrase
_START: Final = re.compile(r"^\W*")
_AFTER_OPENING: Final = re.compile(r"[.!:,;\u2014-]\s*")
#: words that ask for an explanation, however they open
_EXPLAIN: Final = re.compile(r"^\W*(?:explain|describe|tell me)\b", re.IGNORECASE)
_WRITE: Final = re.compile(
    r"```|\b(?:write|create|generate|make|build|implement|fix|repair|port|convert|translate|rewrite|code|"
    r"refactor|update|complete|add|extend|need|want|show me|give me|examples?|look like|(?:can|could|may) i "
    r"(?:have|get|see)|compiles?|compiling)\b|\bfn\s+\w+\s*\(", re.IGNORECASE)
#: an explicit refusal of code: "no code (please)", "without (writing) (any) code", "don't write any
#: code", "do not give me a function", "I don't need to see code", "not asking for code", "just
#: explain". "no code" and "without code" count only at the end of a phrase, so "no code comments"
#: or "without code duplication" (how the code should be) refuse nothing
_NO_CODE: Final = re.compile(
    r"\b(?:no|without(?:\s+(?:any|writing|showing|giving|including|some|actual))*)\s+(?:vox\s+)?code"
    r"(?:\s+(?:examples?|snippets?|samples?))?"
    r"(?:\s+(?:please|pls|needed|required|necessary|thanks|(?:is|are)\s+(?:needed|required|necessary)))?"
    r"(?=\s*(?:$|[.,;:!?)\u2014]))"
    r"|\b(?:do\s+not|don['\u2019]?t|no\s+need\s+to)\s+(?:write|give|show|generate|send|include|provide|produce"
    r"|need|want)(?:\s+to\s+(?:see|get|have|read|write))?(?:\s+(?:me|us))?(?:\s+(?:any|a|the|some))?\s+(?:vox\s+)?"
    r"(?:code|programs?|functions?|snippets?|examples?|implementations?)\b"
    r"|\bno\s+need\s+for\s+(?:any\s+)?code\b|\bnot\s+(?:asking|looking)\s+for\s+(?:any\s+)?code\b"
    r"|\bskip\s+(?:the\s+)?code\b"
    r"|\b(?:just|only)\s+(?:explain|describe|tell\s+me)\b|\b(?:just|only)\s+an\s+explanation\b"
    r"|\bexplanation\s+only\b", re.IGNORECASE)
#: follow-ups that ask for the code to change, though they open with a question word
_CHANGE: Final = re.compile(r"^\W*(?:what\s+if|what\s+about|how\s+about|and\s+if|now\s+)\b", re.IGNORECASE)


def _one_slip(word: str, base: str) -> bool:
    """Whether ``word`` is ``base`` with one letter added, dropped, changed, or two neighbours swapped."""
    if abs(len(word) - len(base)) > 1 or word == base:
        return False
    if len(word) == len(base):
        diff = [i for i in range(len(word)) if word[i] != base[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and word[diff[0]] == base[diff[1]] and word[diff[1]] == base[diff[0]])
    short, long_ = (word, base) if len(word) < len(base) else (base, word)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


def is_question_word(word: str) -> bool:
    """Whether ``word`` opens a question: a question word, with or without the apostrophe of a
    contraction ("what's", "whats", "hows", "doesnt"), or one of :data:`_FUZZY_BASES` with one
    letter slipped ("wat", "wht", "waht", "hw", "wich"; "whts" with its contraction), unless it is
    a word of its own (:data:`_NOT_QUESTION_WORDS`: "way", "hot", "whey"). Never raises."""
    low = word.lower().replace("'", "").replace("\u2019", "")
    if not low:
        return False
    if _QWORD.fullmatch(low):
        return True
    if low in _NOT_QUESTION_WORDS:
        return False
    stems = [low] + [low[: -len(end)] for end in ("s", "re", "d") if low.endswith(end) and len(low) > len(end) + 1]
    return any(stem[0] == base[0] and stem not in _NOT_QUESTION_WORDS and _one_slip(stem, base)
               for stem in stems for base in _FUZZY_BASES)


def _word_after(text: str, end: int) -> str:
    m = _WORD_AT.match(text, end)
    return m.group() if m is not None else ""


def opens_question(text: str) -> bool:
    """Whether ``text`` is worded as a question: its first word is a question word
    (:func:`is_question_word`) or asks for an explanation ("explain", "describe", "tell me"), or,
    when it ends with a question mark, a question word follows an opening phrase ("Hi! Whats an
    actor?", "In Vox, what is a workflow?"). Never raises."""
    start = _START.match(text)
    if _EXPLAIN.search(text) or (start is not None and is_question_word(_word_after(text, start.end()))):
        return True
    if not text.rstrip().endswith(("?", "\uff1f")):
        return False
    return any(is_question_word(_word_after(text, m.end())) for m in _AFTER_OPENING.finditer(text))


def refuses_code(text: str) -> bool:
    """True when ``text`` explicitly asks for no code (:data:`_NO_CODE`: "no code please", "don't
    write any code", "without writing any code", "just explain") and, that refusal left out, asks
    for nothing to be written (:data:`_WRITE`): "What is an actor in Vox? Don't write any code." A
    request that also asks for something ("I have no code yet. Write a Vox function...") refuses
    nothing. Never raises."""
    plain = _NO_CODE.sub(" ", text)
    return plain != text and not _WRITE.search(plain)


def is_vox_request(text: str) -> bool:
    """True when the request asks for Vox code: it mentions Vox and a code action, or it gives a
    backticked signature in Vox syntax (`` `is_adult(u: User) to bool` ``, :data:`_VOX_SIGNATURE`;
    a new-user trial's request that named no language went unchecked). A question about the
    language that asks for nothing to be written ("what is an actor in Vox?", "Whats a workflow in
    Vox?", "wht is a workflow in vox?": :func:`opens_question`) is not one: a new-user trial got a
    made-up function and ``vox-script-verify: PASS`` for it; nor is a request that refuses code
    (:func:`refuses_code`: "Explain workflows in Vox, no code please"), whose refusal's words
    ("code", "write") are no code action."""
    if refuses_code(text):
        return False
    if _VOX_SIGNATURE.search(text):
        return True
    plain = _NO_CODE.sub(" ", text)
    if not (_VOX.search(plain) and _VOX_ACTION.search(plain)):
        return False
    return not _asks_nothing_written(plain)


def _asks_nothing_written(plain: str) -> bool:
    return opens_question(plain) and not _WRITE.search(plain)


def is_question(text: str) -> bool:
    """True when ``text`` is a question that asks for nothing to be written ("whats a workflow?",
    "why does it return 0?"): in a Vox conversation such a follow-up is answered as prose, not
    checked as code. A follow-up that asks for a change ("what if it took a list?", "how about
    negative numbers?", "can you make it generic?") is not one. Never raises."""
    plain = _NO_CODE.sub(" ", text)
    return not _CHANGE.search(plain) and _asks_nothing_written(plain)
