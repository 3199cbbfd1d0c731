"""`pathlib.Path` arguments: the files cross, never the judge's file system.

A test that hands the candidate `tmp_path / "out.txt"` (or a directory of inputs) sends what is
there by value: the candidate gets a path into its OWN temporary directory holding a copy, and
after the call the judge copies the new state back into the original place. Only paths inside the
judge's temporary directory (where pytest's tmp_path lives) cross; any other path (the workspace
with the hidden tests, the report directory, /) is refused. The judge's path string never crosses
either (it names the test): the candidate sees a number, and a path it returns under its copy
comes back as the judge's own path.
"""

import base64
import itertools
import os
import pathlib
import shutil
import tempfile

MAX_BYTES = 8 << 20
MAX_ENTRIES = 2000
_ids = itertools.count(1)


class Paths:
    """One side's table: the judge's originals by number, the candidate's copies by root."""

    def __init__(self, judge: bool):
        self.judge = judge
        self.originals: dict[int, pathlib.Path] = {}  # judge: number -> the test's path
        self.copies: dict[str, int] = {}  # candidate: root of a copy -> number

    # -- the judge's side ---------------------------------------------------------------------
    def send(self, path: pathlib.Path) -> list:
        """[number, kind, name, tree] of a test's path (TypeError outside the judge's tmp)."""
        real = os.path.realpath(path)
        if not real.startswith(_tmp() + os.sep):
            raise TypeError("a path outside the test's temporary directory never crosses to the candidate")
        number = next(_ids)
        self.originals[number] = path
        kind, tree = snapshot(real)
        return [number, kind, path.name, tree]

    def original(self, number, rel=""):
        base = self.originals.get(number) if type(number) is int else None
        if base is None or type(rel) is not str:
            raise ValueError("unknown path")
        return base / _relative(rel) if rel else base

    def copy_back(self, orig: pathlib.Path, kind, tree) -> None:
        """The candidate's new state of `orig`, written where the test will look."""
        real = os.path.realpath(orig)
        if not real.startswith(_tmp() + os.sep):
            raise ValueError("a path outside the temporary directory")
        if kind == "missing":
            if os.path.isdir(real) and not os.path.islink(real):
                shutil.rmtree(real)
            elif os.path.lexists(real):
                os.unlink(real)
            return
        if kind == "file":
            if os.path.isdir(real):
                shutil.rmtree(real)
            _write(real, tree[0][1] if tree else "")
            return
        if kind != "dir":
            raise ValueError("unknown path kind")
        if os.path.lexists(real) and not os.path.isdir(real):
            os.unlink(real)
        os.makedirs(real, exist_ok=True)
        keep = set()
        for entry in tree:
            rel = _relative(entry[0])
            keep.add(rel)
            target = os.path.join(real, rel)
            if os.path.realpath(os.path.dirname(target)) != os.path.normpath(os.path.dirname(target)):
                raise ValueError("a link inside a copied directory")
            if entry[1] is None:
                os.makedirs(target, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                _write(target, entry[1])
        _, before = snapshot(real)
        for entry in before:
            if entry[1] is not None and entry[0] not in keep:
                os.unlink(os.path.join(real, entry[0]))

    # -- the candidate's side -----------------------------------------------------------------
    def materialize(self, number, kind, name, tree) -> pathlib.Path:
        root = tempfile.mkdtemp(prefix="path-", dir=_base())
        self.copies[root] = int(number)
        target = os.path.join(root, _relative(str(name)))
        if kind == "file":
            _write(target, tree[0][1] if tree else "")
        elif kind == "dir":
            os.makedirs(target)
            for entry in tree:
                at = os.path.join(target, _relative(entry[0]))
                if entry[1] is None:
                    os.makedirs(at, exist_ok=True)
                else:
                    os.makedirs(os.path.dirname(at), exist_ok=True)
                    _write(at, entry[1])
        return pathlib.Path(target)

    def locate(self, path: pathlib.Path):
        """(number, path relative to the original) for a path inside one of our copies, else None."""
        text = os.path.abspath(path)
        for root, number in self.copies.items():
            if text.startswith(root + os.sep):
                rel = os.path.relpath(text, root).split(os.sep, 1)
                return number, rel[1] if len(rel) > 1 else ""
        return None


def snapshot(real: str):
    """(kind, tree) of a path: tree is [[relative path, base64 or None for a directory]]."""
    if os.path.islink(real) or not os.path.exists(real):
        return "missing", []
    if os.path.isfile(real):
        return "file", [["", _read(real)]]
    tree, total = [], 0
    for top, dirs, files in os.walk(real):
        for d in sorted(dirs):
            if not os.path.islink(os.path.join(top, d)):
                tree.append([os.path.relpath(os.path.join(top, d), real), None])
        for f in sorted(files):
            full = os.path.join(top, f)
            if os.path.islink(full) or not os.path.isfile(full):
                continue
            total += os.path.getsize(full)
            tree.append([os.path.relpath(full, real), _read(full)])
        if total > MAX_BYTES or len(tree) > MAX_ENTRIES:
            raise TypeError(f"a directory over {MAX_BYTES >> 20} MiB or {MAX_ENTRIES} entries does not cross")
    return "dir", tree


def _relative(rel: str) -> str:
    if type(rel) is not str:
        raise ValueError("a path must be text")
    norm = os.path.normpath(rel)
    if os.path.isabs(rel) or norm == ".." or norm.startswith(".." + os.sep):
        raise ValueError("a path that leaves its directory")
    return "" if norm == "." else norm


def _read(path: str) -> str:
    if os.path.getsize(path) > MAX_BYTES:
        raise TypeError(f"a file over {MAX_BYTES >> 20} MiB does not cross")
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode()


def _write(path: str, data: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(base64.b64decode(data, validate=True))


def _tmp() -> str:
    # TMPDIR first: tempfile caches its answer, possibly from before this process's environment was set.
    return os.path.realpath(os.environ.get("TMPDIR") or tempfile.gettempdir())


def _base() -> str:
    base = os.path.join(_tmp(), "agentlab-paths")
    os.makedirs(base, exist_ok=True)
    return base
