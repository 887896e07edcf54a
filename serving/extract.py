"""Pull the Vox program out of a model's answer: drop reasoning sections, find ```vox fences.

Fences follow CommonMark's rules, made lenient for model output: backtick or tilde fences of
three or more characters, any indentation, an info string whose first word is ``vox`` (any
case, ``{.vox}``, ``vox title=...``, ``main.vox``), closed by a fence of the same character at
least as long (so four-backtick fences may contain three-backtick ones). A Vox block closes where
the decoder closes one (:func:`pipeline.decoding_fence.closing_fence`): at the first such fence
not inside a ``//`` comment or a string literal on its line, also right after code on that line;
any other fence only at a bare fence line. A fence that is not Vox (```` ```markdown ````,
```` ```` ````) is searched for Vox fences inside it; an unterminated fence runs to the end of
the answer (and is marked so). Line ends are normalised
first: CRLF (Windows), CR alone (old Mac OS), NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR all
become ``\n``, so a closing fence is recognised whatever the model or its transport used.
Nothing here executes anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: reasoning sections some models emit before the answer (removed before extraction)
_THINK_TAGS = ("think", "thinking", "reasoning", "reflection")
_THINK_BLOCK = re.compile(
    r"<(?P<tag>" + "|".join(_THINK_TAGS) + r")\b[^>]*>.*?</(?P=tag)\s*>", re.IGNORECASE | re.DOTALL
)
_THINK_OPEN = re.compile(r"<(" + "|".join(_THINK_TAGS) + r")\b[^>]*>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</(" + "|".join(_THINK_TAGS) + r")\s*>", re.IGNORECASE)

#: every line end a model or a transport may produce, longest first (CRLF before CR)
_LINE_ENDS = re.compile("\r\n|[\r\x85\u2028\u2029]")

_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_ONE_LINE = re.compile(r"^[ \t]*(?P<fence>`{3,})(?P<info>[^`\n]*?)[ \t]+(?P<code>[^`\n].*?)(?P=fence)[ \t]*$")


@dataclass(frozen=True, slots=True)
class VoxBlock:
    """One ```vox fenced block.

    Attributes:
        code: the block's text (indentation of the fence removed, no trailing newline).
        line: 1-based line of the opening fence in the answer (after reasoning was stripped).
        info: the fence's info string as written (e.g. ``"Vox title=main"``).
        terminated: False when the answer ended before the closing fence.
    """

    code: str
    line: int
    info: str
    terminated: bool = True


def normalize_newlines(text: str) -> str:
    """``text`` with every line end (CRLF, CR, NEL, U+2028, U+2029) written as ``\n``."""
    return _LINE_ENDS.sub("\n", text)


def strip_reasoning(text: str) -> str:
    """Remove ``<think>…</think>`` (and thinking/reasoning/reflection) sections.

    An opening tag without its closing tag hides everything after it (the model never finished
    thinking); a closing tag without an opening tag hides everything before it (models that
    start inside the reasoning section and only print the closing tag).
    """
    text = _THINK_BLOCK.sub("", text)
    close = _THINK_CLOSE.search(text)
    if close and not _THINK_OPEN.search(text, 0, close.start()):
        text = text[close.end():]
    opened = _THINK_OPEN.search(text)
    if opened:
        text = text[: opened.start()]
    return text.strip("\n")


def is_vox_info(info: str) -> bool:
    """True when a fence info string names Vox (``vox``, ``Vox``, ``{.vox}``, ``main.vox`` ...)."""
    word = re.split(r"[\s,:;{}()\[\]]+", info.strip().lstrip("{").strip().lstrip("."), maxsplit=1)[0]
    word = word.lower()
    return word == "vox" or word.endswith(".vox") or word in ("vox-script", "voxlang", "vox2026")


def extract_vox_blocks(answer: str) -> list[VoxBlock]:
    """Every Vox fenced block of ``answer`` in order, after removing reasoning sections.

    Args:
        answer: the model's full reply (Markdown with prose, any fences, any line ends).

    Returns:
        The blocks (possibly empty), their code with ``\n`` line ends. Never raises.
    """
    lines = strip_reasoning(normalize_newlines(answer)).split("\n")
    return _scan(lines, 0)


def _scan(lines: list[str], offset: int) -> list[VoxBlock]:
    blocks: list[VoxBlock] = []
    i = 0
    while i < len(lines):
        one = _ONE_LINE.match(lines[i])
        if one and is_vox_info(one["info"] or "") and one["info"].strip():
            blocks.append(VoxBlock(one["code"].rstrip(), offset + i + 1, one["info"].strip()))
            i += 1
            continue
        m = _FENCE_OPEN.match(lines[i])
        if not m or (m["fence"][0] == "`" and "`" in m["info"]):
            i += 1
            continue
        fence, info, indent = m["fence"], m["info"].strip(), len(m["indent"].expandtabs(4))
        if is_vox_info(info):
            end, body = _vox_body(lines, i + 1, fence)
            code = "\n".join(_dedent(line, indent) for line in body).strip("\n")
            blocks.append(VoxBlock(code, offset + i + 1, info, end is not None))
        else:
            close = re.compile(r"^[ \t]*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*$")
            end = next((j for j in range(i + 1, len(lines)) if close.match(lines[j])), None)
            body = [_dedent(line, indent) for line in lines[i + 1: len(lines) if end is None else end]]
            blocks.extend(_scan(body, offset + i + 1))
        i = len(lines) if end is None else end + 1
    return blocks


def _vox_body(lines: list[str], start: int, fence: str) -> tuple[int | None, list[str]]:
    """The index of the line on which the Vox block opened by ``fence`` (body from ``lines[start]``)
    closes (``None``: never) and the block's lines. The close is the decoder's
    (:func:`pipeline.decoding_fence.closing_fence`): the first run of at least ``len(fence)`` fence
    characters not inside a ``//`` comment or a string literal on its line, so a comment or string
    holding ```` ``` ```` does not end the block, and code before a fence on its line is kept."""
    from pipeline.decoding_fence import closing_fence

    text = "\n".join(lines[start:])
    at = closing_fence(text, fence)
    if at < 0:
        return None, lines[start:]
    body = text[:at].split("\n")
    end = start + len(body) - 1
    before = body.pop().rstrip(" \t")  # what stands before the fence on its line (usually nothing)
    return end, body + [before] if before else body


def _dedent(line: str, width: int) -> str:
    """Remove up to ``width`` columns of leading whitespace (the fence's own indentation)."""
    removed = 0
    pos = 0
    while pos < len(line) and removed < width and line[pos] in " \t":
        removed += 4 if line[pos] == "\t" else 1
        pos += 1
    return line[pos:]


def join_program(blocks: list[VoxBlock]) -> str:
    """All blocks as one module (blank line between blocks), as the compiler checks them."""
    return "\n\n".join(b.code for b in blocks if b.code.strip()) + ("\n" if blocks else "")


class ThinkFilter:
    """Streaming display filter: hides reasoning sections as text arrives chunk by chunk.

    ``feed(chunk)`` returns the visible part; a possible partial tag at the end of a chunk is
    held back until the next chunk decides it. ``flush()`` returns what is left.
    """

    _MAX_TAG = max(len(t) for t in _THINK_TAGS) + 4

    def __init__(self) -> None:
        self._buf = ""
        self._inside = False
        self.hidden_chars = 0

    def feed(self, chunk: str) -> str:
        """Visible text for ``chunk`` (may be empty)."""
        self._buf += chunk
        out: list[str] = []
        while self._buf:
            pattern = _THINK_CLOSE if self._inside else _THINK_OPEN
            m = pattern.search(self._buf)
            if m:
                if self._inside:
                    self.hidden_chars += m.start()
                else:
                    out.append(self._buf[: m.start()])
                self._buf = self._buf[m.end():]
                self._inside = not self._inside
                continue
            lt = self._buf.rfind("<")
            keep = lt if lt != -1 and len(self._buf) - lt <= self._MAX_TAG + 2 else len(self._buf)
            if self._inside:
                self.hidden_chars += keep
            else:
                out.append(self._buf[:keep])
            self._buf = self._buf[keep:]
            break
        return "".join(out)

    def flush(self) -> str:
        """The held-back tail (hidden if still inside a reasoning section)."""
        rest, self._buf = self._buf, ""
        return "" if self._inside else rest
