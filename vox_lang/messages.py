"""Message and hint templates for every diagnostic code, in one place.

Source: ``vox-language.md`` §6 (text before `` — `` is the message, after it the hint;
E03xx messages are prefixed ``retired syntax: ``). Templates use ``str.format`` fields, so a
literal brace is written doubled (``{{``).
"""

from __future__ import annotations

from typing import Final

RETIRED_PREFIX: Final = "retired syntax: "

#: E0101's hint for a character an editor does not show, where "delete it" alone leaves the
#: reader hunting for it: the template's hint, then which character it is (U+FEFF gets its own)
UNSEEN_CHAR_HINT: Final = "delete it: {c} does not show in most editors"
BOM_HINT: Final = "delete it: U+FEFF is a byte-order mark, allowed only at the very start of a file"

#: R0006 for the caps that ``--max-steps`` does not change (spec §11 names only the step budget,
#: so they keep its code, but not its wording): ``max_output`` and ``max_len`` of ``RunConfig``
OUTPUT_CAP_MESSAGE: Final = "output limit reached: more than {n:,} characters of output (print and std.log together)"
OUTPUT_CAP_HINT: Final = ("output is capped at {n:,} characters whatever --max-steps says: print less "
                          "(a summary, or every Nth line), or write the rest to a file with std.fs")
SIZE_CAP_MESSAGE: Final = "value too large: a {what} longer than {n:,} would exhaust memory"
SIZE_CAP_HINT: Final = "strings and lists are capped at {n:,} elements whatever --max-steps says: build smaller values"
#: R0006 for a value nested deeper than an operation written by recursion can follow (an ordering of
#: values of opaque type); `==`, `str`, `json.dump` and copies follow any depth
DEEP_VALUE_MESSAGE: Final = "value too deep: it nests more levels than this operation can follow"
DEEP_VALUE_HINT: Final = "build flatter values (a list of items rather than items nested in each other)"
MEMORY_MESSAGE: Final = "out of memory: the program exhausted the memory available to it"
MEMORY_HINT: Final = ("build smaller values (fewer or shorter strings, lists and maps); "
                      "--max-steps does not change memory")

#: R0009 hints for text that is nearly a number (spec §11: number text is exactly what `str` writes)
NUMBER_SPACE_HINT: Final = "spaces around a number are not part of it: `{f}(s.trim())`"
NUMBER_WORD_HINT: Final = "the float words are `inf`, `-inf` and `nan`, as `str` writes them"

#: code -> (message template, hint template or None)
TEMPLATES: Final[dict[str, tuple[str, str | None]]] = {
    'E0101': ('unknown character `{c}`', 'delete it'),
    'E0102': ('unterminated string', 'close it with `"` on this line'),
    'E0103': ('invalid escape `\\{c}`', 'use \\n \\t \\\\ \\"'),
    'E0104': ('malformed number `{text}`', 'write 12 or 1.5'),
    'E0105': ('integer `{text}` exceeds 64 bits', None),
    'E0106': ('invalid UTF-8 byte 0x{hex}', 'save the file as UTF-8'),
    'E0107': ('single-quoted string', 'use double quotes'),
    'E0201': ('unexpected `{tok}`, expected {list}', None),
    'E0202': ('unexpected end of input, expected {list}', None),
    'E0203': ('unclosed `{open}`', 'add `{close}`'),
    'E0204': ('unmatched `{close}`', 'remove it'),
    'E0205': ('`{what}` must precede a declaration', None),
    'E0206': ('nesting deeper than 200 levels', 'split into functions'),
    'E0207': ('invalid assignment target', 'use a name, field or index'),
    'E0208': ('positional argument after a named one', 'reorder'),
    'E0209': ('`{kw}` is reserved', 'rename it'),
    'E0210': ('only `on` handlers may appear in an actor', None),
    'E0211': ('`match` needs at least one arm', None),
    'E0212': ('child block after positional arguments', 'name every argument'),
    'E0301': ('colon block after `{kw}`', 'use braces: `{kw} … {{ … }}`'),
    'E0302': ('`state` field', 'use `let mut` in a function'),
    'E0303': ('decorator `@{name}`', 'per decorator, §2'),
    'E0304': ('`#` comment', 'use `//`'),
    'E0305': ('angle-bracket markup', 'use a view call: `column(gap=1) {{ … }}`'),
    'E0306': ('`isnt`', 'use `!=`'),
    'E0307': ('match arm written with `to`', 'use `->`'),
    'E0308': ('`->` as return arrow', 'use `to`'),
    'E0309': ('semicolon', 'one statement per line'),
    'E0310': ('`Err`', 'use `Error(…)`'),
    'E0311': ('`!`', 'use `not`'),
    'E0312': ('`&&`', 'use `and`'),
    'E0313': ('`||`', 'use `or`'),
    'E0314': ('`null`', 'use `None`'),
    'E0401': ('undefined name `{n}`', 'did you mean `{s}`?'),
    'E0402': ('`{n}` is already defined in this scope', 'first at {line}:{col}'),
    'E0403': ('unknown type `{T}`', 'did you mean `{S}`?'),
    'E0404': ('module `{m}` has no member `{n}`', 'did you mean `{s}`?'),
    'E0405': ('`{kw}` outside a loop', None),
    'E0406': ('`ret` outside a function', None),
    'E0407': ('unknown constructor `{C}`', 'did you mean `{S}`?'),
    'E0408': ('`{n}` is not an actor', '`spawn` takes an actor name'),
    'E0409': ('`{T}` takes {n} type argument(s), found {m}', None),
    'E0410': ('`{n}` is a type, not a value', None),
    'E0501': ('type mismatch: expected `{t}`, found `{u}`', None),
    'E0502': ('`{n}` is not a function (type `{t}`)', None),
    'E0503': ('`{f}` takes {n} argument(s), {m} given', None),
    'E0504': ('argument `{p}` of `{f}` expects `{t}`, found `{u}`', None),
    'E0505': ('`{f}` has no parameter `{p}` (or `{p}` given twice)', None),
    'E0506': ('`{n}` is annotated `{t}` but its value is `{u}`', None),
    'E0507': ('`ret` gives `{u}` but `{f}` returns `{t}`', None),
    'E0508': ('`{f}` does not return `{t}` on every path', 'end each path with `ret …`'),
    'E0509': ('cannot assign to immutable `{n}`', 'declare it `let mut {n}`'),
    'E0510': ('`{op}` cannot apply to `{t}` (and `{u}`)', None),
    'E0511': ('condition must be `bool`, found `{t}`', None),
    'E0512': ('`{T}` has no field or method `{f}`', 'did you mean `{g}`?'),
    'E0513': ('`{T}` literal is missing field(s) {list}', None),
    'E0514': ('`{C}` has {n} field(s), pattern gives {m}', None),
    'E0515': ('non-exhaustive match: missing {cases}', 'add those arms or `_ -> …`'),
    'E0516': ('`?` needs Result or Option, found `{t}`', None),
    'E0517': ('`?` on {kind} in a function returning `{t}`', 'return {kind}[…] or use `match`'),
    'E0518': ('actor `{A}` has no handler `{h}`', 'did you mean `{g}`?'),
    'E0519': ('`{t}` cannot be indexed by `{u}`', None),
    'E0520': ('view child must be Element, str or List[Element], found `{t}`', None),
    'E0521': ('route target `{f}` must take {params} and return Element', None),
    'E0522': ('activity `{a}` called outside a workflow', 'call it from a `workflow`'),
    'E0523': ('misuse of `@{d}`: {reason}', None),
    'E0524': ('pattern `{p}` cannot match `{t}`', None),
    'W0001': ('`return` is a compat spelling', 'fix: `ret`'),
    'W0002': ('`=>` in a match arm', 'fix: `->`'),
    'W0003': ('record type without `=`', 'fix: `{{` → `= {{`'),
    'W0004': ('`is` as equality', 'fix: `==`'),
    'W0005': ('`std` used without `import std`', 'fix: insert `import std`'),
    'W0006': ('`list[…]` type', 'fix: `List`'),
    'W0007': ('`{kw}` as a match-arm body', 'fix: wrap it in `{{ … }}`'),
    'W0008': ('`@endpoint(kind: {k})` is a compat spelling', 'fix: `pub fn`'),
    'W0009': ('`component` declaration', 'fix: `fn {n}(…) to Element {{ ret … }}`'),
    'W0101': ('unreachable match arm', 'remove it or move it up'),
    'W0102': ('unknown decorator `@{d}` (ignored)', None),
    'R0001': ('integer overflow: {detail}', None),
    'R0002': ('assertion failed', None),
    'R0003': ('division by zero', None),
    'R0004': ('index {i} out of range for length {n}', None),
    'R0005': ('missing key {k}', 'use `get` for a key that may be absent'),
    'R0006': ('step budget exhausted: {detail}',
              'look for an endless loop, or raise the budget (`vox run`/`vox test` --max-steps)'),
    'R0007': ('call depth exceeded: more than {n} nested calls', 'look for endless recursion'),
    'R0008': ('capability not granted: {detail}', 'run with `--allow {cap}`'),
    'R0009': ('not a number: {text}', None),
    'R0010': ('time limit exceeded: {detail}', 'raise --timeout, or look for an endless loop'),
}
