"""Registry of diagnostic codes (spec §6): one ``Final`` constant per code.

Each :class:`ErrorCode` has the numbered code, a short kebab-case name and its default
severity (``E`` codes are errors, ``W`` codes warnings; strict mode promotes warnings).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class ErrorCode:
    """One diagnostic code: ``code`` (``E0401``), ``name`` (``undefined-name``), ``description``."""

    code: str
    name: str
    description: str

    @property
    def is_warning(self) -> bool:
        """True for ``W`` codes."""
        return self.code.startswith("W")

    def __str__(self) -> str:
        return self.code


E0101: Final = ErrorCode('E0101', 'unknown-character', 'unknown character `c`')
E0102: Final = ErrorCode('E0102', 'unterminated-string', 'unterminated string')
E0103: Final = ErrorCode('E0103', 'invalid-escape', 'invalid escape `\\c`')
E0104: Final = ErrorCode('E0104', 'malformed-number', 'malformed number `text`')
E0105: Final = ErrorCode('E0105', 'integer-overflow', 'integer `text` exceeds 64 bits')
E0106: Final = ErrorCode('E0106', 'invalid-utf8', 'invalid UTF-8 byte 0xhex')
E0107: Final = ErrorCode('E0107', 'single-quoted-string', 'single-quoted string')
E0201: Final = ErrorCode('E0201', 'unexpected-token', 'unexpected `tok`, expected list')
E0202: Final = ErrorCode('E0202', 'unexpected-eof', 'unexpected end of input, expected list')
E0203: Final = ErrorCode('E0203', 'unclosed-bracket', 'unclosed `open`')
E0204: Final = ErrorCode('E0204', 'unmatched-bracket', 'unmatched `close`')
E0205: Final = ErrorCode('E0205', 'dangling-decorator', '`what` must precede a declaration')
E0206: Final = ErrorCode('E0206', 'nesting-too-deep', 'nesting deeper than 200 levels')
E0207: Final = ErrorCode('E0207', 'invalid-assign-target', 'invalid assignment target')
E0208: Final = ErrorCode('E0208', 'positional-after-named', 'positional argument after a named one')
E0209: Final = ErrorCode('E0209', 'reserved-word', '`kw` is reserved')
E0210: Final = ErrorCode('E0210', 'actor-non-handler', 'only `on` handlers may appear in an actor')
E0211: Final = ErrorCode('E0211', 'empty-match', '`match` needs at least one arm')
E0212: Final = ErrorCode('E0212', 'children-after-positional', 'child block after positional arguments')
E0301: Final = ErrorCode('E0301', 'colon-block', 'colon block after `kw`')
E0302: Final = ErrorCode('E0302', 'state-field', '`state` field')
E0303: Final = ErrorCode('E0303', 'retired-decorator', 'decorator `@name`')
E0304: Final = ErrorCode('E0304', 'hash-comment', '`#` comment')
E0305: Final = ErrorCode('E0305', 'angle-markup', 'angle-bracket markup')
E0306: Final = ErrorCode('E0306', 'isnt', '`isnt`')
E0307: Final = ErrorCode('E0307', 'arm-to', 'match arm written with `to`')
E0308: Final = ErrorCode('E0308', 'arrow-return', '`->` as return arrow')
E0309: Final = ErrorCode('E0309', 'semicolon', 'semicolon')
E0310: Final = ErrorCode('E0310', 'err-constructor', '`Err`')
E0311: Final = ErrorCode('E0311', 'bang-not', '`!`')
E0312: Final = ErrorCode('E0312', 'and-and', '`&&`')
E0313: Final = ErrorCode('E0313', 'or-or', '`||`')
E0314: Final = ErrorCode('E0314', 'null', '`null`')
E0401: Final = ErrorCode('E0401', 'undefined-name', 'undefined name `n`')
E0402: Final = ErrorCode('E0402', 'duplicate-definition', '`n` is already defined in this scope')
E0403: Final = ErrorCode('E0403', 'unknown-type', 'unknown type `T`')
E0404: Final = ErrorCode('E0404', 'unknown-member', 'module `m` has no member `n`')
E0405: Final = ErrorCode('E0405', 'loop-control-outside-loop', '`kw` outside a loop')
E0406: Final = ErrorCode('E0406', 'ret-outside-function', '`ret` outside a function')
E0407: Final = ErrorCode('E0407', 'unknown-constructor', 'unknown constructor `C`')
E0408: Final = ErrorCode('E0408', 'spawn-non-actor', '`n` is not an actor')
E0409: Final = ErrorCode('E0409', 'type-arity', '`T` takes n type argument(s), found m')
E0410: Final = ErrorCode('E0410', 'type-as-value', '`n` is a type, not a value')
E0501: Final = ErrorCode('E0501', 'type-mismatch', 'type mismatch: expected `t`, found `u`')
E0502: Final = ErrorCode('E0502', 'not-callable', '`n` is not a function (type `t`)')
E0503: Final = ErrorCode('E0503', 'call-arity', '`f` takes n argument(s), m given')
E0504: Final = ErrorCode('E0504', 'argument-type', 'argument `p` of `f` expects `t`, found `u`')
E0505: Final = ErrorCode('E0505', 'unknown-parameter', '`f` has no parameter `p` (or `p` given twice)')
E0506: Final = ErrorCode('E0506', 'annotation-mismatch', '`n` is annotated `t` but its value is `u`')
E0507: Final = ErrorCode('E0507', 'return-type', '`ret` gives `u` but `f` returns `t`')
E0508: Final = ErrorCode('E0508', 'missing-return', '`f` does not return `t` on every path')
E0509: Final = ErrorCode('E0509', 'immutable-assign', 'cannot assign to immutable `n`')
E0510: Final = ErrorCode('E0510', 'operator-type', '`op` cannot apply to `t` (and `u`)')
E0511: Final = ErrorCode('E0511', 'condition-type', 'condition must be `bool`, found `t`')
E0512: Final = ErrorCode('E0512', 'unknown-field', '`T` has no field or method `f`')
E0513: Final = ErrorCode('E0513', 'missing-field', '`T` literal is missing field(s) list')
E0514: Final = ErrorCode('E0514', 'pattern-arity', '`C` has n field(s), pattern gives m')
E0515: Final = ErrorCode('E0515', 'non-exhaustive-match', 'non-exhaustive match: missing cases')
E0516: Final = ErrorCode('E0516', 'question-operand', '`?` needs Result or Option, found `t`')
E0517: Final = ErrorCode('E0517', 'question-context', '`?` on kind in a function returning `t`')
E0518: Final = ErrorCode('E0518', 'unknown-handler', 'actor `A` has no handler `h`')
E0519: Final = ErrorCode('E0519', 'index-type', '`t` cannot be indexed by `u`')
E0520: Final = ErrorCode('E0520', 'view-child-type', 'view child must be Element, str or List[Element], found `t`')
E0521: Final = ErrorCode('E0521', 'route-target', 'route target `f` must take params and return Element')
E0522: Final = ErrorCode('E0522', 'activity-outside-workflow', 'activity `a` called outside a workflow')
E0523: Final = ErrorCode('E0523', 'decorator-misuse', 'misuse of `@d`: reason')
E0524: Final = ErrorCode('E0524', 'pattern-type', 'pattern `p` cannot match `t`')
W0001: Final = ErrorCode('W0001', 'compat-return', '`return` is a compat spelling')
W0002: Final = ErrorCode('W0002', 'compat-fat-arrow', '`=>` in a match arm')
W0003: Final = ErrorCode('W0003', 'compat-record-type', 'record type without `=`')
W0004: Final = ErrorCode('W0004', 'compat-is', '`is` as equality')
W0005: Final = ErrorCode('W0005', 'compat-std-without-import', '`std` used without `import std`')
W0006: Final = ErrorCode('W0006', 'compat-list-type', '`list[…]` type')
W0007: Final = ErrorCode('W0007', 'compat-arm-statement', '`kw` as a match-arm body')
W0008: Final = ErrorCode('W0008', 'compat-endpoint', '`@endpoint(kind: k)` is a compat spelling')
W0009: Final = ErrorCode('W0009', 'compat-component', '`component` declaration')
W0101: Final = ErrorCode('W0101', 'unreachable-arm', 'unreachable match arm')
W0102: Final = ErrorCode('W0102', 'unknown-decorator', 'unknown decorator `@d` (ignored)')

R0001: Final = ErrorCode('R0001', 'integer-overflow-runtime', 'integer overflow (64-bit)')
R0002: Final = ErrorCode('R0002', 'assertion-failed', 'assertion failed')
R0003: Final = ErrorCode('R0003', 'division-by-zero', 'division by zero')
R0004: Final = ErrorCode('R0004', 'index-out-of-range', 'index out of range')
R0005: Final = ErrorCode('R0005', 'missing-key', 'missing key')
R0006: Final = ErrorCode('R0006', 'step-budget', 'step budget exhausted')
R0007: Final = ErrorCode('R0007', 'call-depth', 'call depth exceeded')
R0008: Final = ErrorCode('R0008', 'capability-not-granted', 'capability not granted')
R0009: Final = ErrorCode('R0009', 'not-a-number', 'not a number')
R0010: Final = ErrorCode('R0010', 'time-limit', 'time limit exceeded')

#: every code by its string, e.g. ``REGISTRY["E0401"]``
REGISTRY: Final[dict[str, ErrorCode]] = {
    'E0101': E0101,
    'E0102': E0102,
    'E0103': E0103,
    'E0104': E0104,
    'E0105': E0105,
    'E0106': E0106,
    'E0107': E0107,
    'E0201': E0201,
    'E0202': E0202,
    'E0203': E0203,
    'E0204': E0204,
    'E0205': E0205,
    'E0206': E0206,
    'E0207': E0207,
    'E0208': E0208,
    'E0209': E0209,
    'E0210': E0210,
    'E0211': E0211,
    'E0212': E0212,
    'E0301': E0301,
    'E0302': E0302,
    'E0303': E0303,
    'E0304': E0304,
    'E0305': E0305,
    'E0306': E0306,
    'E0307': E0307,
    'E0308': E0308,
    'E0309': E0309,
    'E0310': E0310,
    'E0311': E0311,
    'E0312': E0312,
    'E0313': E0313,
    'E0314': E0314,
    'E0401': E0401,
    'E0402': E0402,
    'E0403': E0403,
    'E0404': E0404,
    'E0405': E0405,
    'E0406': E0406,
    'E0407': E0407,
    'E0408': E0408,
    'E0409': E0409,
    'E0410': E0410,
    'E0501': E0501,
    'E0502': E0502,
    'E0503': E0503,
    'E0504': E0504,
    'E0505': E0505,
    'E0506': E0506,
    'E0507': E0507,
    'E0508': E0508,
    'E0509': E0509,
    'E0510': E0510,
    'E0511': E0511,
    'E0512': E0512,
    'E0513': E0513,
    'E0514': E0514,
    'E0515': E0515,
    'E0516': E0516,
    'E0517': E0517,
    'E0518': E0518,
    'E0519': E0519,
    'E0520': E0520,
    'E0521': E0521,
    'E0522': E0522,
    'E0523': E0523,
    'E0524': E0524,
    'W0001': W0001,
    'W0002': W0002,
    'W0003': W0003,
    'W0004': W0004,
    'W0005': W0005,
    'W0006': W0006,
    'W0007': W0007,
    'W0008': W0008,
    'W0009': W0009,
    'W0101': W0101,
    'W0102': W0102,
    'R0001': R0001,
    'R0002': R0002,
    'R0003': R0003,
    'R0004': R0004,
    'R0005': R0005,
    'R0006': R0006,
    'R0007': R0007,
    'R0008': R0008,
    'R0009': R0009,
    'R0010': R0010,
}

#: compat spellings (spec §6, §10): accepted with a warning and a mechanical ``fix``
COMPAT_CODES: Final = frozenset(
    c.code for c in (W0001, W0002, W0003, W0004, W0005, W0006, W0007, W0008, W0009)
)
