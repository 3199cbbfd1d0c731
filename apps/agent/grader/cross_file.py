"""Cross-file tasks, checked by AST (stdlib only): which symbols of a task's dependency files its
reference fix uses. The studies' public-context question ("do dependency files in the prompt help
the repair?") needs tasks whose fix really reads a dependency; this names them.

    python -I cross_file.py < tasks.jsonl   ->  one {"id", "group", "uses": ["module.NAME", ...]} a line

A use counts when the reference imports a name the dependency module defines at its top level
(`from limits import LIMIT`, or `import limits` then `limits.LIMIT`) and then reads it; an import
that is never read, or a name the dependency does not define, is no use. A file that does not parse
defines and reads nothing (the admission audit feeds it uploaded tasks, one a run, and judges the
reference by its tests, not here).
"""

import ast
import json
import sys


def module_name(path: str) -> str | None:
    if not path.endswith(".py"):
        return None
    name = path[: -len(".py")].replace("/", ".")
    return name[: -len(".__init__")] if name.endswith(".__init__") else name


def parse(source: str) -> ast.Module:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return ast.Module(body=[], type_ignores=[])


def top_level_names(source: str) -> set[str]:
    """Names a module defines at its top level: assignments, functions, classes."""
    names: set[str] = set()
    for node in parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def uses(source: str, deps: dict[str, set[str]]) -> set[str]:
    """The `module.NAME` symbols of `deps` (module -> its top-level names) that `source` reads."""
    tree = parse(source)
    bound: dict[str, str] = {}  # local name -> "module.NAME"
    aliases: dict[str, str] = {}  # local name -> module
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in deps:
            for a in node.names:
                if a.name in deps[node.module]:
                    bound[a.asname or a.name] = f"{node.module}.{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name in deps:
                    aliases[a.asname or a.name] = a.name
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in bound:
            found.add(bound[node.id])
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and node.attr in deps[aliases[node.value.id]]
        ):
            found.add(f"{aliases[node.value.id]}.{node.attr}")
    return found


def cross_file_uses(task: dict) -> list[str]:
    """The dependency symbols a task's reference fix reads (empty: not a cross-file task)."""
    deps: dict[str, set[str]] = {}
    for f in task.get("files", []):
        name = module_name(f["path"])
        if f.get("role") == "dependency" and name:
            deps[name] = top_level_names(f["content"])
    out: set[str] = set()
    for ref in task.get("reference", []):
        if ref["path"].endswith(".py"):
            out |= uses(ref["content"], deps)
    return sorted(out)


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            task = json.loads(line)
            print(json.dumps({"id": task["id"], "group": task["source_group"], "uses": cross_file_uses(task)}))


if __name__ == "__main__":
    main()
