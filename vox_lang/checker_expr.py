"""Expression checking (spec §4): literals, operators, branches, lists, records, indexing,
``?``, lambdas and ``spawn``. Checking is bidirectional: ``expected`` carries the type the
context wants, which turns an ``INT`` literal into a ``float`` and gives ``[]``/``{}`` and
record literals their type."""

from __future__ import annotations

from vox_lang import codes, hir
from vox_lang.checker_env import CheckerPart, FnCtx
from vox_lang.types import (
    BOOL,
    ELEMENT,
    FLOAT,
    INT,
    NEVER,
    STR,
    UNIT,
    UNKNOWN,
    TCon,
    TFn,
    TNever,
    TRecord,
    TUnknown,
    TVar,
    Type,
    is_con,
    list_of,
)

_ARITH = frozenset({"+", "-", "*", "/", "%"})
_ORDER = frozenset({"<", ">", "<=", ">="})
_NUM = ("int", "float")


def is_int_literal(e: hir.Expr) -> bool:
    """An ``INT`` literal, possibly negated (it checks as ``float`` where one is expected)."""
    while isinstance(e, hir.Unary) and e.op == "-":
        e = e.operand
    return isinstance(e, hir.Lit) and e.kind == "int"


class ExprChecker(CheckerPart):
    """Expression rules; calls and members live in :mod:`vox_lang.checker_calls`."""

    def expr(self, e: hir.Expr, expected: Type | None = None, used: bool = True) -> Type:
        """Check ``e`` and return its type (``?`` past the depth cap)."""
        if not self.env.enter(e.span):
            return UNKNOWN
        try:
            return self._expr(e, expected, used)
        finally:
            self.env.depth -= 1

    def _expr(self, e: hir.Expr, expected: Type | None, used: bool) -> Type:  # noqa: C901
        if isinstance(e, hir.Ref):
            return self.env.value_type(e)
        if isinstance(e, hir.Lit):
            if e.kind == "int":
                return FLOAT if expected is not None and is_con(self.env.u, expected, "float") else INT
            return {"float": FLOAT, "str": STR, "bool": BOOL}.get(e.kind, UNIT)
        if isinstance(e, hir.Call):
            return self.walk.call(e, expected)
        if isinstance(e, hir.Member):
            return self.walk.member(e)
        if isinstance(e, hir.Binary):
            return self.binary(e, expected)
        if isinstance(e, hir.Unary):
            return self.unary(e, expected)
        if isinstance(e, hir.ListLit):
            return self.list_lit(e, expected)
        if isinstance(e, hir.RecordLit):
            return self.record_lit(e, expected)
        if isinstance(e, hir.Index):
            return self.index(e)
        if isinstance(e, hir.Try):
            return self.try_(e)
        if isinstance(e, hir.If):
            return self.if_(e, expected, used)
        if isinstance(e, hir.Match):
            return self.walk.match(e, expected, used)
        if isinstance(e, hir.Block):
            return self.walk.block(e, expected, used)
        if isinstance(e, hir.Lambda):
            return self.lambda_(e)
        if isinstance(e, hir.Spawn):
            return UNKNOWN if e.def_id is None else self.env.resolve_type(hir.NamedType(e.def_id, e.actor, (), e.span))
        if isinstance(e, hir.Children):
            return self.children(e)
        return UNKNOWN

    # ------------------------------------------------------------------ operators

    def noted(self, e: hir.Expr, t: Type) -> None:
        """Called with the type of each operator inside a chain, which :meth:`binary` checks
        without a call to :meth:`expr` (a hook for subclasses that record types)."""

    def binary(self, e: hir.Binary, expected: Type | None) -> Type:
        """A binary operator and the left-nested operators under it (``a + b + … + z``),
        checked along the chain's left spine in a loop, so that a flat chain of any length
        costs one nesting level, not one per operand. Operands are checked left to right."""
        spine = [(e, expected)]
        node, want = e, expected
        while isinstance(node.left, hir.Binary):
            want = self.left_expected(node, want)
            node = node.left
            spine.append((node, want))
        lt = self.expr(node.left, self.left_expected(node, want))
        for i in range(len(spine) - 1, -1, -1):
            node, want = spine[i]
            lt = self.binary_step(node, want, lt)
            if i:
                self.noted(node, lt)
        return lt

    def left_expected(self, e: hir.Binary, expected: Type | None) -> Type | None:
        """The type the left operand of ``e`` is checked against, given ``e``'s expected type."""
        if e.op in ("and", "or"):
            return BOOL
        if e.op in _ARITH and expected is not None and is_con(self.env.u, expected, "float"):
            return expected
        return None

    def binary_step(self, e: hir.Binary, expected: Type | None, lt: Type) -> Type:
        """The type of ``e`` given its left operand's type ``lt`` (checks the right operand)."""
        op = e.op
        if op in ("and", "or"):
            rt = self.expr(e.right, BOOL)
            if self.loose(lt) or self.loose(rt):
                return UNKNOWN if self.unknown(lt, rt) else BOOL
            if not (is_con(self.env.u, lt, "bool") and is_con(self.env.u, rt, "bool")):
                self.env.sink.report(codes.E0510, e.left.span, op=op, t=self.env.show(lt), u=self.env.show(rt))
            return BOOL
        want = self.left_expected(e, expected)
        rt = self.expr(e.right, lt if is_con(self.env.u, lt, "float") else want)
        if is_int_literal(e.left) and is_con(self.env.u, rt, "float"):
            lt = FLOAT
        if self.unknown(lt, rt):
            return UNKNOWN
        lr, rr = self.env.u.resolve(lt), self.env.u.resolve(rt)
        if isinstance(lr, TVar) or isinstance(rr, TVar):
            self.env.u.unify(lr, rr)
            lr, rr = self.env.u.resolve(lt), self.env.u.resolve(rt)
            if isinstance(lr, TVar):
                return BOOL if op not in _ARITH else lr
        if isinstance(lr, TNever) or isinstance(rr, TNever):
            return BOOL if op not in _ARITH else NEVER
        if op in ("==", "!=") and not isinstance(lr, TFn) and not isinstance(rr, TFn):
            if not self.env.u.unify(lr, rr):  # "on one type": the right operand differs from the first
                self.env.sink.report(codes.E0501, e.right.span, t=self.env.show(lt), u=self.env.show(rt))
            return BOOL
        result = self.op_result(op, lr, rr)
        if result is None:
            self.env.sink.report(codes.E0510, e.left.span, op=op, t=self.env.show(lt), u=self.env.show(rt))
            return UNKNOWN if op in _ARITH else BOOL
        return result

    def op_result(self, op: str, lt: Type, rt: Type) -> Type | None:
        """The result of a binary operator on resolved operand types, or ``None`` (E0510)."""
        ln = lt.name if isinstance(lt, TCon) and not lt.args else ""
        rn = rt.name if isinstance(rt, TCon) and not rt.args else ""
        if op in ("==", "!="):
            if isinstance(lt, TFn) or isinstance(rt, TFn) or not self.env.u.unify(lt, rt):
                return None
            return BOOL
        if op in _ORDER:
            return BOOL if ln == rn and ln in ("int", "float", "str") else None
        if op == "%":
            return INT if ln == rn == "int" else None
        if ln in _NUM and rn in _NUM:
            return INT if ln == rn == "int" else FLOAT
        if op == "+" and ln == rn == "str":
            return STR
        return None

    def unary(self, e: hir.Unary, expected: Type | None) -> Type:
        if e.op == "not":
            t = self.expr(e.operand, BOOL)
            if self.loose(t) or is_con(self.env.u, t, "bool"):
                return UNKNOWN if self.unknown(t) else BOOL
        else:
            t = self.expr(e.operand, expected)
            if self.loose(t):
                return UNKNOWN if self.unknown(t) else t
            if is_con(self.env.u, t, "int") or is_con(self.env.u, t, "float"):
                return t
        self.env.sink.report(codes.E0510, e.op_span, op=e.op, t=self.env.show(t))
        return UNKNOWN

    def loose(self, *ts: Type) -> bool:
        return any(isinstance(self.env.u.resolve(t), (TUnknown, TVar, TNever)) for t in ts)

    def unknown(self, *ts: Type) -> bool:
        return any(isinstance(self.env.u.resolve(t), TUnknown) for t in ts)

    # ------------------------------------------------------------------ branches

    def join(self, branches: list[tuple[Type, hir.Expr]], used: bool) -> Type:
        """One type for all branches when the value is used (E0501 at a differing branch)."""
        concrete = [(t, node) for t, node in branches if not isinstance(self.env.u.resolve(t), TNever)]
        if not concrete:
            return NEVER
        if not used:
            return UNIT
        first = concrete[0][0]
        for t, node in concrete[1:]:
            if not self.env.u.unify(first, t):
                span = node.span
                self.env.sink.report(codes.E0501, span, t=self.env.show(first), u=self.env.show(t))
        return first

    def if_(self, e: hir.If, expected: Type | None, used: bool) -> Type:
        branches: list[tuple[Type, hir.Expr]] = []
        want = expected
        cur: hir.If | hir.Block = e
        while isinstance(cur, hir.If):
            self.walk.condition(cur.cond)
            t = self.walk.block(cur.then, want, used)
            if want is None and used and not isinstance(self.env.u.resolve(t), TNever):
                want = t
            branches.append((t, cur.then))
            cur = cur.else_
        branches.append((self.walk.block(cur, want, used), cur))
        return self.join(branches, used)

    # ------------------------------------------------------------------ literals

    def list_lit(self, e: hir.ListLit, expected: Type | None) -> Type:
        exp = self.env.u.resolve(expected) if expected is not None else None
        elem_exp = exp.args[0] if isinstance(exp, TCon) and exp.name == "List" and exp.args else None
        first: Type | None = None
        for x in e.elems:
            want = elem_exp if elem_exp is not None else first
            t = self.expr(x, want)
            if first is None or isinstance(self.env.u.resolve(first), TNever):
                first = t
            elif not self.env.u.unify(first, t):
                self.env.sink.report(codes.E0501, x.span, t=self.env.show(first), u=self.env.show(t))
        if first is None:
            return list_of(elem_exp if elem_exp is not None else self.env.u.fresh())
        return list_of(first)

    def record_lit(self, e: hir.RecordLit, expected: Type | None) -> Type:
        exp = self.env.u.resolve(expected) if expected is not None else None
        if isinstance(exp, TCon) and exp.name == "Map" and len(exp.args) == 2:
            for f in e.fields:
                t = self.expr(f.value, exp.args[1])
                if not self.env.u.unify(exp.args[1], t):
                    self.env.sink.report(codes.E0501, f.value.span, t=self.env.show(exp.args[1]), u=self.env.show(t))
            if e.fields:
                self.env.u.unify(exp.args[0], STR)
            return exp
        fields = self.env.u.fields(exp) if exp is not None else None
        if fields is not None and exp is not None:
            table = dict(fields)
            for f in e.fields:
                if f.name in table:
                    t = self.expr(f.value, table[f.name])
                    if not self.env.u.unify(table[f.name], t):
                        want = self.env.show(table[f.name])
                        self.env.sink.report(codes.E0501, f.value.span, t=want, u=self.env.show(t))
                else:
                    self.expr(f.value)
                    hint = {"g": g} if (g := self.env.hints.suggest(f.name, (fields, table))) else {}
                    self.env.sink.report(codes.E0512, f.name_span, T=self.env.show(exp), f=f.name, **hint)
            given = {f.name for f in e.fields}
            missing = [n for n, _ in fields if n not in given]
            if missing:
                names = ", ".join(f"`{n}`" for n in missing)
                self.env.sink.report(codes.E0513, e.span, T=self.env.show(exp), list=names)
            return exp
        if not e.fields:
            return TCon("Map", (self.env.u.fresh(), self.env.u.fresh()))
        return TRecord(tuple((f.name, self.expr(f.value)) for f in e.fields))

    # ------------------------------------------------------------------ index, ?, lambda

    def index(self, e: hir.Index) -> Type:
        ot = self.env.u.resolve(self.expr(e.obj))
        if isinstance(ot, TCon) and ot.name in ("List", "Map", "str"):
            key = INT if ot.name != "Map" else ot.args[0]
            it = self.expr(e.index, key)
            if self.env.u.unify(key, it):
                return ot.args[-1] if ot.name != "str" else STR
            self.env.sink.report(codes.E0519, e.index.span, t=self.env.show(ot), u=self.env.show(it))
            return UNKNOWN
        it = self.expr(e.index)
        if not isinstance(ot, (TUnknown, TVar, TNever)):
            self.env.sink.report(codes.E0519, e.index.span, t=self.env.show(ot), u=self.env.show(it))
        return UNKNOWN

    def try_(self, e: hir.Try) -> Type:
        ot = self.env.u.resolve(self.expr(e.operand))
        if isinstance(ot, (TUnknown, TVar, TNever)):
            return UNKNOWN
        if not (isinstance(ot, TCon) and ot.name in ("Result", "Option") and ot.args):
            self.env.sink.report(codes.E0516, e.q_span, t=self.env.show(ot))
            return UNKNOWN
        ret = self.env.u.resolve(self.env.ctx.ret)
        if isinstance(ret, TUnknown):
            return ot.args[0]
        if not isinstance(ret, TCon) or ret.name != ot.name:
            ok = False
        elif ot.name == "Result":
            ok = len(ret.args) == 2 and self.env.u.unify(ret.args[1], ot.args[1])
        else:
            ok = True
        if not ok:
            self.env.sink.report(codes.E0517, e.q_span, kind=ot.name, t=self.env.show(ret))
        return ot.args[0]

    def lambda_(self, e: hir.Lambda) -> Type:
        params = tuple(self.env.resolve_type(p.type) for p in e.params)
        ret = self.env.resolve_type(e.ret)
        ctx = FnCtx("lambda", ret, "lambda", self.env.ctx.in_workflow)
        self.walk.body(ctx, e.params, params, e.body, e.span)
        return TFn(params, ret)

    def children(self, e: hir.Children) -> Type:
        """A view call's children: each an Element, a str or a List[Element] (E0520)."""
        for item in e.items:
            t = self.env.u.resolve(self.expr(item))
            if isinstance(t, (TUnknown, TVar, TNever)) or t in (ELEMENT, STR):
                continue
            if isinstance(t, TCon) and t.name == "List" and self.env.u.unify(t, list_of(ELEMENT)):
                continue
            self.env.sink.report(codes.E0520, item.span, t=self.env.show(t))
        return list_of(ELEMENT)
