"""Noticing that a ```vox block has derailed, so that it winds down instead of running to the
token limit (issue 9; the wind-down itself is :func:`pipeline.decoding_done.closing_mask`).

**Why.** Under the grammar and name masks a small model that has lost the thread does not stop:
blank lines, comments, ``|>`` and ``.`` continuation lines and open calls are all valid, so it
writes them until ``max_new_tokens`` cuts the block. A cut block does not parse, so the item the
request asked for counts as not declared (E0203), and every such block costs the whole budget.
In the default run's eval (72f0558, adapter, constrained, 408 samples) 175 blocks were cut.

**The signal** is a line that holds nothing (or only spaces) written where well-formed code never
has one (:func:`derailed_at`):

- inside an open ``(`` or ``[`` (a call's arguments, parameters, a parenthesized expression, a
  list or an index: layout rule L1 drops the newline, so the line is valid, just never written);
- or right after another such line while any bracket is open (two blank lines in a row inside a
  function, an actor, a record);
- or a line that starts with ``.`` or ``|>`` (L3: it continues the line before) right after a
  blank one.

Measured on the same eval's completions, read as the decoder sees them grow: 173 of the 175 cut
blocks show it, against 1 of the 81 passing samples (a script whose list literal holds two comment
lines) and 0 of 4,014 well-formed blocks (every block of the corpus' train and held-out splits, and
``examples/``). Blank lines between items and single blank lines between statements are common
and stay free.

**What follows** (:class:`pipeline.decoding_hold.RequestHold`): from the derailed line on, the
block winds down as when the token budget is nearly spent (:mod:`pipeline.decoding_done`: closers,
then finishers such as ``{`` after a header, then a newline), and at the next top-level item
boundary the fence closes. If a requested item is still missing there, the derailed state ends
and its header is forced as usual (a fresh start). If every requested name is written but the
program does not parse (garbage the grammar over-approximates), the fence is no longer held: a
block that can never declare the item cleanly closes instead of running to the limit.

**Measured** (``bench/retries.py`` on the stored 72f0558 export, seeded and paired, 408 samples):
blocks cut 178 -> 21 on the first pass; "declares what was asked" 0.531 -> 0.887; headline
pass@1 0.181 -> 0.189, and after one round of compiler-checked retries 0.199 -> 0.238 (a closed
block can be retried from its first faulty line, a cut one could not: fixed 7 -> 20).
"""

from __future__ import annotations

from typing import Final

from pipeline.decoding_scan import L1_FRAMES, scan

#: line starts that continue the line before (layout rule L3 drops the newline before them)
_CONTINUATIONS: Final = (".", "|>")


def derailed_at(code: str, start: int = 0) -> int:
    """Offset in ``code`` (an open block's text) of the first derailing blank line (see the module
    docstring) whose newline lies at or after ``start``; ``-1`` if none.

    ``start`` lets a caller that grows ``code`` token by token look only at lines finished since
    its last call (pass the previous ``len(code)``). The first line of the block never counts.
    """
    at = code.find("\n", start)
    while at >= 0:
        begin = code.rfind("\n", 0, at) + 1  # start of the line the newline at ``at`` ends
        if begin > 0 and not code[begin:at].strip():
            stack = scan(code[:begin]).stack
            if any(frame.kind in L1_FRAMES for frame in stack) or stack and _after_blank(code, begin):
                return begin
        at = code.find("\n", at + 1)
    last = code.rfind("\n") + 1  # the line being written: a continuation right after a blank line
    if last > 0 and code[last:].lstrip(" \t").startswith(_CONTINUATIONS) and _after_blank(code, last):
        return last
    return -1


def _after_blank(code: str, begin: int) -> bool:
    """Whether the line starting at ``begin`` (> 0) follows a blank one that is not the block's first."""
    before = code.rfind("\n", 0, begin - 1) + 1  # start of the line before it
    return before > 0 and not code[before:begin - 1].strip()
