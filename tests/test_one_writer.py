"""Every file veil publishes goes through one writer, the package ``veil.output``: this guard reads the
source of every module outside it (with ``ast``) and fails on a direct write, so that no later feature can
bypass the temporary files, the all-or-nothing commit and the refusal to replace an input.

What counts as a direct write: ``open`` (or ``os.fdopen``, ``Path.open``) with a mode that writes
(``w``, ``a``, ``x``, ``+``); ``os.open`` with a flag that writes or creates; ``write_text``,
``write_bytes``; ``os.replace``, ``os.rename``, ``os.link``, ``shutil``'s copies and moves,
``Path.rename``; anything from ``tempfile``; and the writers of pandas, pyarrow, polars,
NumPy and matplotlib (``to_csv``, ``write_table``, ``savefig`` …) unless they write into an
in-memory buffer made in the same function (``io.BytesIO``, ``pyarrow.BufferOutputStream``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "veil"
WRITER = SRC / "output"   # the package that may write, every module of it

# (module, function, what): the writes that must stay where they are, each with its reason.
ALLOWED = {
    # An SQLite ledger's writers queue on a lock file created empty beside it and never replaced:
    # a lock must stay one inode for every process (the writer's rename would give a new one).
    ("ledger/store.py", "Store._queued", "os.open"),
    # pyspark.sql.functions.to_json turns a struct column into its JSON text (a person and group
    # pair's key for bounding, inside a Spark job): a column expression, no file.
    ("dp/spark_statistics.py", "_bounded", "to_json"),
}

WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}
MOVES = {("os", "replace"), ("os", "rename"), ("os", "renames"), ("os", "link"), ("os", "symlink"),
         ("os", "truncate"), ("shutil", "copy"), ("shutil", "copy2"), ("shutil", "copyfile"),
         ("shutil", "copytree"), ("shutil", "move")}
# Writers that take the destination as their first argument, or as the second (``write_table(table, where)``).
FIRST_ARGUMENT = {"to_csv", "to_parquet", "to_json", "to_excel", "to_feather", "to_pickle", "write_csv",
                  "write_parquet", "write_ipc", "write_json", "savefig", "save", "savez", "savez_compressed",
                  "savetxt", "tofile"}
SECOND_ARGUMENT = {"write_table", "write_feather", "write_csv", "dump"}
# Modules whose open() takes the path first and the mode second, like the built-in one.
OPENERS = {"os", "io", "gzip", "bz2", "lzma", "codecs", "builtins"}
IN_MEMORY = {"BytesIO", "StringIO", "BufferOutputStream"}


def _name(func: ast.AST) -> tuple[str, str]:
    """``(object, attribute)`` of a call: ``os.replace`` → ("os", "replace"), ``open`` → ("", "open")."""
    if isinstance(func, ast.Attribute):
        owner = func.value.id if isinstance(func.value, ast.Name) else ""
        return owner, func.attr
    if isinstance(func, ast.Name):
        return "", func.id
    return "", ""


def _constant(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _keyword(call: ast.Call, name: str) -> ast.AST | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


class _Scanner(ast.NodeVisitor):
    def __init__(self):
        self.found: list[tuple[str, int, str]] = []   # (function, line, what)
        self.scope: list[str] = []
        self.buffers: list[set[str]] = [set()]

    def _function(self, node):
        self.scope.append(node.name)
        self.buffers.append({target.id for n in ast.walk(node) if isinstance(n, ast.Assign)
                             and isinstance(n.value, ast.Call) and _name(n.value.func)[1] in IN_MEMORY
                             for target in n.targets if isinstance(target, ast.Name)})
        self.generic_visit(node)
        self.buffers.pop()
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_ClassDef(self, node):
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    def _report(self, node, what: str) -> None:
        self.found.append((".".join(self.scope), node.lineno, what))

    def visit_Import(self, node):
        if any(alias.name.split(".")[0] == "tempfile" for alias in node.names):
            self._report(node, "tempfile")

    def visit_ImportFrom(self, node):
        if (node.module or "").split(".")[0] == "tempfile":
            self._report(node, "tempfile")

    def _in_memory(self, target: ast.AST | None) -> bool:
        if isinstance(target, ast.Call):
            return _name(target.func)[1] in IN_MEMORY
        return isinstance(target, ast.Name) and target.id in self.buffers[-1]

    def visit_Call(self, node):
        owner, attr = _name(node.func)
        if (attr == "open" and owner != "os") or (owner, attr) == ("os", "fdopen"):
            # open(path, mode), io.open(path, mode), os.fdopen(fd, mode), but Path(…).open(mode)
            position = 0 if isinstance(node.func, ast.Attribute) and owner not in OPENERS else 1
            mode = _keyword(node, "mode") or (node.args[position] if len(node.args) > position else None)
            text = _constant(mode)
            if text is not None and set(text) & set("wax+"):
                self._report(node, f"{attr}(…, {text!r})")
        elif (owner, attr) == ("os", "open"):
            flags = {n.attr for n in ast.walk(node.args[1]) if isinstance(n, ast.Attribute)} if node.args[1:] else set()
            if flags & WRITE_FLAGS:
                self._report(node, "os.open")
        elif attr in ("write_text", "write_bytes"):
            self._report(node, attr)
        elif (owner, attr) in MOVES:
            self._report(node, f"{owner}.{attr}")
        elif attr == "rename" and len(node.args) == 1 and not node.keywords:
            self._report(node, "Path.rename")
        elif owner == "tempfile":
            self._report(node, f"tempfile.{attr}")
        elif attr in FIRST_ARGUMENT | SECOND_ARGUMENT:
            destination = _keyword(node, "path_or_buf") or _keyword(node, "fname") or _keyword(node, "where")
            if destination is None and attr in SECOND_ARGUMENT and len(node.args) > 1:
                destination = node.args[1]
            elif destination is None and attr in FIRST_ARGUMENT and node.args:
                destination = node.args[0]
            if destination is not None and not self._in_memory(destination):
                self._report(node, attr)
        self.generic_visit(node)


def direct_writes(source: str) -> list[tuple[str, int, str]]:
    """The direct file writes in a module's source: ``(function, line, what)``."""
    scanner = _Scanner()
    scanner.visit(ast.parse(source))
    return scanner.found


def _modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if WRITER not in p.parents)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_only_veil_output_writes_files(path):
    where = str(path.relative_to(SRC).as_posix())
    found = [f"line {line} ({function or 'module'}): {what}" for function, line, what in
             direct_writes(path.read_text(encoding="utf-8")) if (where, function, what) not in ALLOWED]
    assert not found, f"{where} writes files itself; publish through veil.output instead: " + "; ".join(found)


def test_every_allowance_is_still_needed():
    used = {(str(path.relative_to(SRC).as_posix()), function, what)
            for path in _modules() for function, _, what in direct_writes(path.read_text(encoding="utf-8"))}
    assert ALLOWED <= used, f"allowances no write needs any more: {sorted(ALLOWED - used)}"


def test_the_writer_package_alone_is_left_out_and_it_does_write():
    left_out = sorted(set(SRC.rglob("*.py")) - set(_modules()))
    assert left_out and all(path.relative_to(SRC).parts[0] == "output" for path in left_out)
    assert any(direct_writes(path.read_text(encoding="utf-8")) for path in left_out)


def test_the_guard_sees_every_kind_of_write():
    source = '''
import io
import os
import shutil
import tempfile
from pathlib import Path

def writes(path, frame, fig, table):
    open(path, "w").write("x")
    with open(path, mode="ab") as fh:
        pass
    os.fdopen(3, "wb")
    Path(path).open("w")
    os.open(path, os.O_WRONLY | os.O_CREAT)
    Path(path).write_text("x")
    Path(path).write_bytes(b"x")
    os.replace(path, path)
    os.rename(path, path)
    shutil.move(path, path)
    Path(path).rename(path)
    tempfile.mkstemp()
    frame.to_csv(path)
    fig.savefig(path)
    pq.write_table(table, path)

def reads_and_buffers(path, frame, fig, table):
    open(path).read()
    open(path, "rb").read()
    os.open(path, os.O_RDONLY)
    frame.to_csv(index=False)
    frame.rename(columns={"a": "b"})
    "text".replace("a", "b")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    sink = pa.BufferOutputStream()
    pacsv.write_csv(table, sink)
'''
    writes = ["open(…, 'w')", "open(…, 'ab')", "fdopen(…, 'wb')", "open(…, 'w')", "os.open", "write_text",
              "write_bytes", "os.replace", "os.rename", "shutil.move", "Path.rename", "tempfile.mkstemp", "to_csv",
              "savefig", "write_table"]
    found = [(function, what) for function, _, what in direct_writes(source)]
    assert found == [("", "tempfile")] + [("writes", what) for what in writes]
