"""Expression types for the executor: the checker run once more over a valid module,
recording the type it gives every expression.

The executor needs a few facts only the checker knows: an ``INT`` literal checked as ``float``
(spec §4), whether a record literal is a map or which declared record it builds (print order),
and the operand types of operators (``/`` on ints truncates). Recording is a subclass of the
checker whose ``expr`` notes each result; diagnostics go to a throw-away sink.
"""

from __future__ import annotations

from vox_lang import hir
from vox_lang.checker import Checker
from vox_lang.checker_env import CheckerEnv, Walk
from vox_lang.checker_expr import ExprChecker
from vox_lang.depth import pass_guard
from vox_lang.diagnostics import DiagnosticSink
from vox_lang.source import SourceFile
from vox_lang.types import TCon, TNamedRec, TRecord, Type


class _RecordingExprs(ExprChecker):
    """The checker's expression part, remembering ``id(expr) -> type`` (resolved later, once
    every variable is bound); nested expressions come back through :meth:`expr` as well."""

    def __init__(self, env: CheckerEnv, walk: Walk) -> None:
        super().__init__(env, walk)
        self.seen: dict[int, tuple[hir.Expr, Type]] = {}

    def expr(self, e: hir.Expr, expected: Type | None = None, used: bool = True) -> Type:
        t = super().expr(e, expected, used)
        self.seen[id(e)] = (e, t)  # the node is kept alive with its id
        return t

    def noted(self, e: hir.Expr, t: Type) -> None:
        self.seen[id(e)] = (e, t)  # an operator inside a chain (checked without expr())


class _Recorder(Checker):
    """The checker with the recording expression part."""

    def __init__(self, module: hir.Module, sink: DiagnosticSink) -> None:
        super().__init__(module, sink)
        self.recording = _RecordingExprs(self.env, self)
        self.exprs = self.recording
        self.seen = self.recording.seen


class TypeInfo:
    """Resolved expression types of one module.

    Attributes:
        recorder: the checker that ran (its unifier resolves variables; ``fields`` of records).
    """

    def __init__(self, module: hir.Module, source: SourceFile) -> None:
        sink = DiagnosticSink(source)
        self.recorder = _Recorder(module, sink)
        with pass_guard():
            self.recorder.run()
        self.u = self.recorder.env.u

    def type_of(self, e: hir.Expr) -> Type | None:
        """The resolved type of ``e`` (``None`` if the checker never reached it)."""
        got = self.recorder.seen.get(id(e))
        return self.u.resolve(got[1]) if got is not None else None

    def head(self, e: hir.Expr) -> str:
        """The type head of ``e``: ``int float str bool List Map Set Option Result Unit Element``,
        ``record`` (declared or literal), ``sum``, ``actor``, ``fn``, or ``""`` when unknown."""
        t = self.type_of(e)
        if isinstance(t, TCon):
            return t.name
        if isinstance(t, (TNamedRec, TRecord)):
            return "record"
        name = type(t).__name__
        return {"TSum": "sum", "TActor": "actor", "TFn": "fn"}.get(name, "")

    def is_float(self, e: hir.Expr) -> bool:
        """True when ``e`` was checked as ``float``."""
        t = self.type_of(e)
        return isinstance(t, TCon) and t.name == "float"

    def record_order(self, e: hir.RecordLit) -> tuple[str, ...] | None:
        """Field print order of a record literal (declared order for a declared record type),
        or ``None`` when the literal is a map."""
        t = self.type_of(e)
        if isinstance(t, TCon) and t.name == "Map":
            return None
        names = {f.name for f in e.fields}
        if isinstance(t, TNamedRec):
            declared = tuple(n for n, _ in self.recorder.env.record_fields(t.def_id))
            if set(declared) == names:
                return declared
        if isinstance(t, TRecord) and {n for n, _ in t.fields} == names:
            return tuple(n for n, _ in t.fields)
        return tuple(f.name for f in e.fields)

    def is_container(self, e: hir.Expr) -> bool:
        """True when values of ``e``'s type may be mutable containers (copy them when stored)."""
        t = self.type_of(e)
        if isinstance(t, TCon):
            return t.name in ("List", "Map", "Set")
        return not (t is not None and type(t).__name__ in ("TFn", "TActor", "TSum"))
