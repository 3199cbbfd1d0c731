"""AST mutation operators, shared by the mutation audit and the bug synthesizer (stdlib only).

    python -I mutate.py < {"source": "...", "max": 100}
      ->  {"normalized": "...", "mutants": [{"operator", "line", "description", "source"}]}

Mutants are enumerated in a fixed order (tree walk order, then operator order) so that the same
source always yields the same list; equivalent re-printings and non-compiling mutants are dropped.
"""

import ast
import copy
import json
import sys

CMP_SWAP = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
ARITH_SWAP = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.FloorDiv,
    ast.FloorDiv: ast.Mult,
    ast.Div: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
}
BOOL_SWAP = {ast.And: ast.Or, ast.Or: ast.And}


def _sites(tree):
    """Yields (node_index, kind, detail) for every mutable spot, in walk order."""
    for i, node in enumerate(ast.walk(tree)):
        if isinstance(node, ast.Compare):
            for j, op in enumerate(node.ops):
                if type(op) in CMP_SWAP:
                    yield i, "comparison", j
        elif isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in ARITH_SWAP:
            yield i, "arithmetic", None
        elif isinstance(node, ast.BoolOp) and type(node.op) in BOOL_SWAP:
            yield i, "boolean", None
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield i, "negation", None
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            yield i, "constant", 1
            yield i, "constant", -1
        elif isinstance(node, ast.Slice):
            for part in ("lower", "upper"):
                if getattr(node, part) is not None:
                    yield i, "slice_bound", part
        elif (
            isinstance(node, ast.Return)
            and node.value is not None
            and not (isinstance(node.value, ast.Constant) and node.value.value is None)
        ):
            yield i, "return_value", None
        if isinstance(node, (ast.FunctionDef, ast.For, ast.While, ast.If, ast.With)):
            body = node.body
            if len(body) > 1:
                for k, stmt in enumerate(body):
                    if not isinstance(stmt, (ast.Return, ast.FunctionDef, ast.ClassDef)) and not _is_docstring(stmt):
                        yield i, "removed_statement", k


def _is_docstring(stmt):
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _apply(node, kind, detail):
    """Mutates `node` in place; returns a short description."""
    if kind == "comparison":
        old = node.ops[detail]
        node.ops[detail] = CMP_SWAP[type(old)]()
        return f"{type(old).__name__} -> {type(node.ops[detail]).__name__}"
    if kind == "arithmetic":
        old = node.op
        node.op = ARITH_SWAP[type(old)]()
        return f"{type(old).__name__} -> {type(node.op).__name__}"
    if kind == "boolean":
        old = node.op
        node.op = BOOL_SWAP[type(old)]()
        return f"{type(old).__name__} -> {type(node.op).__name__}"
    if kind == "negation":
        # The node is edited in place, so `not x` becomes `not not x`, i.e. bool(x).
        node.operand = ast.UnaryOp(op=ast.Not(), operand=node.operand)
        return "removed `not`"
    if kind == "constant":
        old = node.value
        node.value = old + detail
        return f"{old} -> {node.value}"
    if kind == "slice_bound":
        bound = getattr(node, detail)
        setattr(node, detail, ast.BinOp(left=bound, op=ast.Add(), right=ast.Constant(1)))
        return f"slice {detail} bound + 1"
    if kind == "return_value":
        node.value = ast.Constant(None)
        return "return None"
    if kind == "removed_statement":
        stmt = node.body[detail]
        node.body[detail] = ast.Pass()
        return f"removed line {getattr(stmt, 'lineno', '?')}"
    raise ValueError(kind)


def normalize(source: str) -> str:
    return ast.unparse(ast.parse(source)) + "\n"


def mutants(source: str, limit: int = 200) -> list:
    tree = ast.parse(source)
    base = ast.unparse(tree)
    seen = {base}
    out = []
    for index, kind, detail in list(_sites(tree)):
        clone = copy.deepcopy(tree)
        node = next(n for i, n in enumerate(ast.walk(clone)) if i == index)
        line = getattr(node, "lineno", 0)
        desc = _apply(node, kind, detail)
        ast.fix_missing_locations(clone)
        try:
            text = ast.unparse(clone)
            compile(text, "<mutant>", "exec")
        except (SyntaxError, ValueError, RecursionError):
            continue
        if text in seen:
            continue
        seen.add(text)
        out.append({"operator": kind, "line": line, "description": desc, "source": text + "\n"})
        if len(out) >= limit:
            break
    return out


if __name__ == "__main__":
    req = json.load(sys.stdin)
    try:
        norm = normalize(req["source"])
        json.dump({"normalized": norm, "mutants": mutants(norm, int(req.get("max", 200)))}, sys.stdout)
    except (SyntaxError, ValueError, RecursionError) as e:
        json.dump({"error": f"{type(e).__name__}: {e}"}, sys.stdout)
