"""Lowering: desugaring (pipes, compound assignment, missing else, children, script body),
name resolution to definition ids, scopes and "did you mean" (spec §3, §9)."""

from __future__ import annotations

import pytest

from vox_lang import hir, syntax
from vox_lang.diagnostics import Diagnostic, DiagnosticSink
from vox_lang.lower import lower_module
from vox_lang.parser import parse_module
from vox_lang.scopes import levenshtein, suggest
from vox_lang.source import SourceFile, Span


def lower(text: str) -> tuple[hir.Module, tuple[Diagnostic, ...]]:
    src = SourceFile(text)
    sink = DiagnosticSink(src)
    module = parse_module(src, sink)
    assert not sink.has_code_prefix("E01", "E02", "E03"), sink.sorted()
    return lower_module(module, sink), sink.sorted()


def script_expr(module: hir.Module, i: int = -1) -> hir.Expr:
    stmt = module.script[i]
    if isinstance(stmt, hir.Let):
        return stmt.value
    assert isinstance(stmt, hir.ExprStmt)
    return stmt.expr


def test_pipe_with_call_inserts_first_argument() -> None:
    m, diags = lower("fn f(a: int, b: int) to int { ret a }\nlet r = 1 |> f(2)")
    assert not diags
    call = script_expr(m)
    assert isinstance(call, hir.Call) and isinstance(call.callee, hir.Ref)
    assert call.callee.name == "f"
    assert all(isinstance(a.value, hir.Lit) for a in call.args)
    assert [a.value.value for a in call.args if isinstance(a.value, hir.Lit)] == [1, 2]


def test_pipe_to_name_is_a_call() -> None:
    m, _ = lower("fn g(a: int) to int { ret a }\nlet r = 1 |> g |> g")
    outer = script_expr(m)
    assert isinstance(outer, hir.Call) and isinstance(outer.args[0].value, hir.Call)
    assert outer.args[0].value.args[0].value == hir.Lit(1, "int", outer.args[0].value.args[0].value.span)


def test_compound_assignment_expands() -> None:
    m, _ = lower("let mut x = 1\nx -= 2")
    stmt = m.script[1]
    assert isinstance(stmt, hir.Assign) and isinstance(stmt.value, hir.Binary)
    assert stmt.value.op == "-" and stmt.value.left is stmt.target
    first = m.script[0]
    assert isinstance(first, hir.Let)
    assert isinstance(stmt.target, hir.Ref) and stmt.target.def_id == first.def_id


def test_missing_else_is_an_empty_block() -> None:
    m, _ = lower("if true { print(1) }")
    e = script_expr(m)
    assert isinstance(e, hir.If) and e.else_ == hir.Block((), e.else_.span)


def test_else_if_chain_is_kept() -> None:
    m, _ = lower("if true { print(1) } else if false { print(2) } else { print(3) }")
    e = script_expr(m)
    assert isinstance(e, hir.If) and isinstance(e.else_, hir.If) and isinstance(e.else_.else_, hir.Block)
    assert len(e.else_.else_.stmts) == 1


def test_children_become_a_named_argument() -> None:
    m, diags = lower('fn V() to Element {\n  ret column(gap=1) {\n    text(value="a")\n    "b"\n  }\n}')
    assert not diags
    fn = m.decls[0]
    assert isinstance(fn, hir.FnDecl)
    ret = fn.body.stmts[0]
    assert isinstance(ret, hir.Ret) and isinstance(ret.value, hir.Call)
    call = ret.value
    assert [a.name for a in call.args] == ["gap", "children"]
    children = call.args[1].value
    assert isinstance(children, hir.Children) and len(children.items) == 2


def test_script_body_in_order_and_declarations_apart() -> None:
    m, _ = lower("let a = 1\nfn f() { }\nprint(a)\nlet b = 2")
    assert [type(s).__name__ for s in m.script] == ["Let", "ExprStmt", "Let"]
    assert [type(d).__name__ for d in m.decls] == ["FnDecl"]


def test_uses_bind_to_definitions() -> None:
    m, _ = lower("fn f(n: int) to int {\n  let k = n\n  ret k\n}")
    fn = m.decls[0]
    assert isinstance(fn, hir.FnDecl)
    let, ret = fn.body.stmts
    assert isinstance(let, hir.Let) and isinstance(ret, hir.Ret)
    assert isinstance(let.value, hir.Ref) and isinstance(ret.value, hir.Ref) and let.def_id is not None
    assert let.value.def_id == fn.params[0].def_id
    assert ret.value.def_id == let.def_id
    assert m.defs[let.def_id].kind == "let" and m.defs[fn.params[0].def_id].kind == "param"


def test_values_and_types_are_separate_namespaces() -> None:
    m, diags = lower("let s: str = str(1)")
    assert not diags
    let = m.script[0]
    assert isinstance(let, hir.Let) and isinstance(let.type, hir.NamedType)
    assert m.defs[let.type.def_id].kind == "prim"
    assert isinstance(let.value, hir.Call) and isinstance(let.value.callee, hir.Ref)
    assert m.defs[let.value.callee.def_id].kind == "builtin"


def test_top_level_let_seen_by_functions_and_later_statements_only() -> None:
    _, diags = lower("fn f() to int { ret late }\nprint(late)\nlet late = 1\nprint(late)")
    assert [(d.code, d.line, d.col) for d in diags] == [("E0401", 2, 7)]


def test_std_members_resolve_and_unknown_ones_are_e0404() -> None:
    m, diags = lower('import std.fs as files\nlet t = files.read("a")\nlet u = files.rd("a")\nlet v = files.reed("a")')
    call = script_expr(m, 0)
    assert isinstance(call, hir.Call) and isinstance(call.callee, hir.Ref)
    assert m.defs[call.callee.def_id].key == "std.fs.read" and call.callee.name == "files.read"
    assert [(d.code, d.line, d.col, d.message, d.hint) for d in diags] == [
        ("E0404", 3, 15, "module `std.fs` has no member `rd`", None),  # 2 is not below len("rd")
        ("E0404", 4, 15, "module `std.fs` has no member `reed`", "did you mean `read`?"),
    ]


def test_import_std_segment_error_points_at_segment() -> None:
    _, diags = lower("import std.jsno")
    d = diags[0]
    assert (d.code, d.col, d.end_col, d.message, d.hint) == (
        "E0404", 12, 16, "module `std` has no member `jsno`", "did you mean `json`?",
    )


def test_opaque_imports_bind_their_alias() -> None:
    m, diags = lower("import acme.tools as t\nprint(t.anything(1))")
    assert not diags
    imp = m.decls[0]
    assert isinstance(imp, hir.ImportDecl) and imp.def_id is not None
    assert m.defs[imp.def_id].kind == "import"


def test_duplicate_hint_gives_first_position() -> None:
    _, diags = lower("fn f() { }\nfn f() { }")
    d = diags[0]
    assert (d.code, d.line, d.col, d.message, d.hint) == (
        "E0402", 2, 4, "`f` is already defined in this scope", "first at 1:4",
    )


def test_params_and_body_top_level_share_a_scope_nested_blocks_shadow() -> None:
    _, diags = lower("fn f(n: int) {\n  if true { let n = 1 }\n  let n = 2\n}")
    assert [(d.code, d.line) for d in diags] == [("E0402", 3)]


def test_prelude_is_shadowable() -> None:
    m, diags = lower("fn print(x: int) { }\nprint(1)")
    assert not diags
    call = script_expr(m)
    assert isinstance(call, hir.Call) and isinstance(call.callee, hir.Ref)
    assert m.defs[call.callee.def_id].kind == "fn"


def test_type_used_as_value_is_e0410() -> None:
    _, diags = lower("type P = { a: int }\nlet x = P")
    assert [(d.code, d.col, d.message) for d in diags] == [("E0410", 9, "`P` is a type, not a value")]


def test_unknown_constructor_suggests_constructors_only() -> None:
    _, diags = lower("fn Somme() { }\nlet r = match 1 {\n  Somme(x) -> 1\n  Sone(y) -> 1\n  _ -> 2\n}")
    # `Somme` the function is no constructor; `Sone` ties `None`/`Some` at 1: alphabetical
    assert [(d.code, d.hint) for d in diags] == [("E0407", "did you mean `Some`?"), ("E0407", "did you mean `None`?")]


def test_type_arity_message() -> None:
    _, diags = lower("let r: Result[int, str, bool] = Ok(1)")
    assert [(d.code, d.message) for d in diags] == [("E0409", "`Result` takes 1 to 2 type argument(s), found 3")]


def test_loop_control_and_ret_placement() -> None:
    _, diags = lower("fn f() { let g = fn() { break } }\nwhile true { let h = fn() { continue } }\nret")
    assert [(d.code, d.line) for d in diags] == [("E0405", 1), ("E0405", 2), ("E0406", 3)]


@pytest.mark.parametrize(
    ("name", "cands", "want"),
    [
        ("totl", ["total", "tot"], "tot"),  # distance 1 each: alphabetical
        ("ab", ["abc", "b"], "abc"),  # "b" is also at distance 1; "abc" < "b"
        ("x", ["y", "xx"], None),  # distance must be below the name's length
        ("count", ["amount"], "amount"),  # distance 2
        ("cnt", ["amount"], None),  # distance 4
        ("prnt", ["print", "prin"], "print"),  # 1 vs 2
    ],
)
def test_suggestion_rule(name: str, cands: list[str], want: str | None) -> None:
    assert suggest(name, cands) == want


def test_levenshtein() -> None:
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("abc", "abc") == 0
    assert levenshtein("abc", "abd", cap=5) == 1


def test_hand_built_ast_lowers_without_parser() -> None:
    sp = Span(0, 1)
    call = syntax.Call(syntax.Name("print", sp), (syntax.Arg(None, syntax.Name("nope", sp), sp),), None, sp)
    module = syntax.Module((syntax.StmtItem(syntax.ExprStmt(call, sp), (), sp),), Span(0, 10))
    sink = DiagnosticSink(SourceFile("x" * 10))
    m = lower_module(module, sink)
    assert isinstance(script_expr(m), hir.Call)
    assert [d.code for d in sink.sorted()] == ["E0401"]
