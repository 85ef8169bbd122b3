"""braid from Python: run DML scripts on NumPy, SciPy and Python values.

    import numpy as np, braid
    X = np.random.rand(1000, 10)
    out = braid.run("G = t(X) %*% X; s = sum(X)", inputs={"X": X}, outputs=["G", "s"])
    out["G"]            # a NumPy array over braid's own storage (no copy)

    p = braid.prepare("y = X %*% w", inputs=["X", "w"], outputs=["y"])
    for w in ws:
        y = p.execute(X=X, w=w)["y"]   # compiled once; the GIL is released while braid runs

Inputs: bool, int, float, str; NumPy arrays (float64 C- and Fortran-
contiguous arrays are bound without a copy, a Fortran-ordered one as the
view of its transpose that the script reads as t(view); other layouts and
dtypes are converted once; 1-D arrays are column vectors); scipy.sparse
matrices (CSR, and CSC as the CSR of its transpose, bound without a copy
when the arrays are in braid's form, other formats converted to CSR); lists of numbers
or of rows. Outputs: Python scalars and strings; matrices as NumPy arrays that
view braid's storage (read-only when braid shares it, e.g. an output that is
an input), or, with sparse=True, scipy.sparse.csr_matrix for outputs braid
holds in sparse form. Frames: a dict {column name: cells} or a pandas
DataFrame binds as a frame (copied; numeric columns by dtype, others as
strings, missing values None); frame outputs are pandas DataFrames when
pandas is installed (frames="dict": dicts {column name: NumPy array
(numbers, read-only views of braid's columns) or list of str (None:
missing)}).
A numeric DataFrame binds as a matrix when wrapped: inputs={"X": braid.Matrix(df)}.
Lists: braid.List (a list with item names) in and out. Without NumPy, matrices come back as braid Matrix
MatrixView objects (memoryview(m).tolist() gives the rows).

Errors in the script, binding or running raise BraidError with braid's
message ("file:line:col: ...").
"""
import os
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Union

# OpenBLAS's workers spin for 2^OPENBLAS_THREAD_TIMEOUT cycles after a
# threaded call (2^28, about 0.1 s, by default) on the cores braid's OpenMP
# team uses next; OpenBLAS reads the variable when it loads, with the
# extension module below (the braid command sets it too: cli/main.c)
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "20")
from ._braid import BraidError, Script, set_threads  # noqa: E402
from ._braid import Matrix as MatrixView   # an output view (braid.Matrix is kept for the lazy API)
from . import _braid

# An installed package (pip install ., setup.py) carries its own copy of
# the builtin library in braid/scripts/builtin; one used from the build
# folder reads the source tree's (and BRAID_HOME, when set, wins over both).
_HOME = os.path.dirname(os.path.abspath(__file__))
if os.path.isdir(os.path.join(_HOME, "scripts", "builtin")):
    _braid.set_home(_HOME)

try:
    import numpy as _np
except ImportError:  # braid works on buffers and lists without NumPy
    _np = None

__all__ = ["run", "prepare", "Prepared", "List", "BraidError", "MatrixView", "set_threads"]


def _is_sparse(v: Any) -> bool:
    try:
        import scipy.sparse
    except ImportError:
        return False
    return scipy.sparse.issparse(v)


class List(list):
    """A DML list: a Python list whose items may have names.

    List([X, 3, "a"]) or List(X=X, k=3); names[i] is item i's name or None.
    Bound as a list input (items: NumPy arrays or nested lists of numbers
    (matrices, copied), numbers, strings, frames (dicts of columns or
    pandas DataFrames, copied), Lists); list outputs come back as Lists,
    their matrices as NumPy arrays over braid's storage, their frames as
    frame outputs come back."""

    def __init__(self, items: Iterable[Any] = (), names: Optional[Iterable[Optional[str]]] = None,
                 **named: Any) -> None:
        items = list(items)
        names = list(names) if names is not None else [None] * len(items)
        if len(names) != len(items):
            raise ValueError("names and items differ in length")
        super().__init__(items + list(named.values()))
        self.names = names + list(named)

    def get(self, name: str) -> Any:
        """The item called name."""
        return self[self.names.index(name)]

    def __repr__(self) -> str:
        return "List(" + ", ".join(f"{n}={v!r}" if n else repr(v) for n, v in zip(self.names, self)) + ")"


def _list_items(v: List) -> list:
    """(name, kind, value) items for Script.bind_list."""
    out = []
    for name, x in zip(v.names, v):
        if isinstance(x, List):
            out.append((name, "list", _list_items(x)))
        elif isinstance(x, dict) or type(x).__name__ == "DataFrame":   # a frame (as bind takes it)
            cols = _frame_columns(x)
            out.append((name, "frame", (len(cols[0][2]) if cols else 0, cols)))
        elif isinstance(x, bool) or (_np is not None and isinstance(x, _np.bool_)):
            out.append((name, "int", int(x)))
        elif isinstance(x, str):
            out.append((name, "str", x))
        elif isinstance(x, int) or (_np is not None and isinstance(x, _np.integer)):
            out.append((name, "int", int(x)))
        elif isinstance(x, float) or (_np is not None and isinstance(x, _np.floating)):
            out.append((name, "double", float(x)))
        elif _np is not None:
            a = _np.asarray(x, dtype=_np.float64)
            a = a.reshape(-1, 1) if a.ndim == 1 else a
            out.append((name, "matrix", _np.ascontiguousarray(a)))
        else:
            import array
            rows = [list(r) if isinstance(r, (list, tuple)) else [r] for r in x]
            flat = array.array("d", [float(c) for r in rows for c in r])
            out.append((name, "matrix", memoryview(flat).cast("B").cast("d", (len(rows), len(rows[0]) if rows else 0))))
    return out


def _column(name: str, col: Any) -> tuple:
    """A frame column as (name, kind, data) for Script.bind_frame."""
    if _np is not None:
        a = _np.asarray(col)
        if a.dtype.kind == "b":
            return (name, "bool", _np.ascontiguousarray(a, dtype=_np.uint8))
        if a.dtype.kind in "iu":
            return (name, "i8", _np.ascontiguousarray(a, dtype=_np.int64))
        if a.dtype.kind == "f":
            return (name, "f8", _np.ascontiguousarray(a, dtype=_np.float64))
    col = list(col)
    if all(isinstance(x, bool) for x in col) and col:
        return (name, "bool", bytes(col))
    if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in col) and col:
        import array
        ints = all(isinstance(x, int) for x in col)
        return (name, "i8" if ints else "f8", array.array("q" if ints else "d", col))
    return (name, "str", [None if x is None else str(x) for x in col])


def _frame_columns(v: Any) -> list:
    """A dict {column name: cells} or a pandas DataFrame as the (name,
    kind, data) columns of Script.bind_frame."""
    if type(v).__name__ == "DataFrame" and hasattr(v, "items"):   # pandas, without importing it
        v = {k: _pandas_column(c) for k, c in v.items()}
    return [_column(str(k), c) for k, c in v.items()]


def _bind_frame(script: Script, name: str, frame: Any) -> None:
    """A dict {column name: cells} (or a pandas DataFrame) as a frame."""
    cols = _frame_columns(frame)
    script.bind_frame(name, len(cols[0][2]) if cols else 0, cols)


def _bind(script: Script, name: str, v: Any) -> None:
    """Binds one input, converting only what braid cannot take as it is."""
    if isinstance(v, Value):   # braid.Matrix(df) etc.: the value it binds, as that kind
        n = v._n
        if n.fmt is not None or n.index >= 0 or n.text is not None:
            raise TypeError(f"input '{name}': a lazy expression (compute() it, or use it in the lazy API)")
        v = n.value
        if n.kind == "matrix" and type(v).__name__ == "DataFrame":
            v = v.to_numpy(dtype="float64")
    if isinstance(v, List):
        script.bind_list(name, _list_items(v))
        return
    if isinstance(v, dict) or (type(v).__name__ == "DataFrame" and hasattr(v, "items")):
        _bind_frame(script, name, v)
        return
    if _is_sparse(v):
        # CSR, and CSC (the CSR of the transpose, read as t(.)), as they
        # are; COO, ...: one conversion
        m = v if v.format in ("csr", "csc") else v.tocsr()
        data = m.data if m.data.dtype == _np.float64 else m.data.astype(_np.float64)
        script.bind_csr(name, m.shape[0], m.shape[1], m.indptr, m.indices, data, m.format == "csc")
        return
    if _np is not None:
        if isinstance(v, _np.generic):
            v = v.item()
        elif isinstance(v, _np.ndarray):
            if v.ndim > 2:
                raise ValueError(f"input '{name}': braid matrices have at most 2 dimensions")
            if v.dtype != _np.float64:
                v = v.astype(_np.float64)
            if v.ndim == 0:
                v = float(v)
    script.bind(name, v)


def _pandas_column(c: Any) -> Any:
    """A pandas column as cells: numbers and bools as their NumPy array,
    anything else as strings with missing values (None, NaN, NA) as None."""
    a = c.to_numpy()
    if a.dtype.kind in "biuf":
        return a
    missing = c.isna().to_numpy()
    return [None if m else str(x) for x, m in zip(a, missing)]


def to_pandas(frame: Mapping[str, Any]) -> Any:
    """A frame output ({column: cells}) as a pandas DataFrame (numeric
    columns from braid's column views; pandas may copy them into its
    blocks; strings as object columns, missing cells None)."""
    import pandas
    return pandas.DataFrame({k: v for k, v in frame.items()}, copy=False)


def _frames_kind(frames: str) -> str:
    if frames not in ("auto", "pandas", "dict"):
        raise ValueError(f"frames must be 'auto', 'pandas' or 'dict', not {frames!r}")
    if frames != "auto":
        return frames
    try:
        import pandas  # noqa: F401
    except ImportError:
        return "dict"
    return "pandas"


def _frame_cells(kind: str, cells: Any) -> Any:
    """A frame output's column: strings as they come, numbers as a NumPy
    view of braid's column (a list without NumPy)."""
    if kind == "str":
        return cells
    if _np is None:
        return [bool(x) for x in memoryview(cells)] if kind == "bool" else list(memoryview(cells))
    a = _np.asarray(cells)
    return a.view(_np.bool_) if kind == "bool" else a


def _output(script: Script, name: str, sparse: bool, frames: str = "dict") -> Any:
    return _value(script.get(name, not sparse), frames)


def _value(v: Any, frames: str = "dict") -> Any:
    """An output as the Python object it becomes (frames, also inside
    lists: DataFrames with frames "pandas", else dicts of columns)."""
    if isinstance(v, list):   # a frame: [(name, kind, cells)]
        d = {c: _frame_cells(k, x) for c, k, x in v}
        return to_pandas(d) if frames == "pandas" else d
    if isinstance(v, tuple):  # a list: ((name, value), ...)
        return List([_value(x, frames) for _, x in v], [n for n, _ in v])
    if not isinstance(v, MatrixView) or _np is None:
        return v
    if not v.sparse:
        return _np.asarray(v)   # a view of braid's storage
    import scipy.sparse
    parts = [_np.asarray(v.part(p)) for p in ("values", "indices", "indptr")]
    return scipy.sparse.csr_matrix(tuple(parts), shape=v.shape, copy=False)


class Prepared:
    """A script compiled once (braid.prepare) and executed many times."""

    def __init__(self, script: Union[str, os.PathLike], inputs: Iterable[str] = (),
                 outputs: Iterable[str] = (), args: Optional[Mapping[str, Any]] = None,
                 sparse: bool = False, frames: str = "auto", stdout: Any = None,
                 loops: Optional[list] = None, compressed_linalg: Optional[Union[str, bool]] = None) -> None:
        self.inputs = list(inputs)
        self.stdout = stdout
        self.loops = loops
        self.outputs = list(outputs)
        self.sparse = sparse
        self.frames = _frames_kind(frames)
        names = [str(k).lstrip("$") for k in (args or {})]
        values = [str(v) for v in (args or {}).values()]
        if _is_path(script):
            self._s = Script(path=os.fspath(script), inputs=self.inputs, outputs=self.outputs,
                             arg_names=names, arg_values=values)
        else:
            if args:
                raise ValueError("args ($-arguments) apply to script files")
            self._s = Script(text=script, inputs=self.inputs, outputs=self.outputs)
        if compressed_linalg is not None:
            self._s.compressed_linalg(_cla_mode(compressed_linalg))

    def execute(self, **inputs: Any) -> Dict[str, Any]:
        """Binds the given inputs (names as declared), runs the script with
        the GIL released, and returns {output name: value}."""
        for k, v in inputs.items():
            _bind(self._s, k, v)
        _execute(self._s, self.stdout, self.loops)
        return {k: _output(self._s, k, self.sparse, self.frames) for k in self.outputs}

    @property
    def executing(self) -> bool:
        """True while an execute() of this script runs (in another thread)."""
        return self._s.executing


def _cla_mode(mode: Union[str, bool]) -> str:
    """sysds.compressed.linalg's value: True/False or "true"/"false"/"auto"."""
    return ("true" if mode else "false") if isinstance(mode, bool) else str(mode)


def _execute(s: Script, stdout: Any, loops: Optional[list] = None) -> None:
    """Runs s (the GIL released). What it prints goes to stdout (an object
    with write(), e.g. sys.stdout in Jupyter or io.StringIO), written when
    the run ends (also when it fails), or, with stdout None, straight to
    the process's standard output as it runs. loops (a list): extended
    by the run's loop statistics (braid_loops: one dict per loop statement
    of the script and the functions it called, the builtin library's too:
    file, line, col, entries, iterations, max_iterations), a count that
    does not depend on what the script prints."""
    s.capture_output(stdout is not None)
    s.count_loops(loops is not None)
    try:
        s.execute()
        if loops is not None:
            loops.extend(s.loops())
    finally:
        if stdout is not None:
            stdout.write(s.output())


def _is_path(script: Union[str, os.PathLike]) -> bool:
    if isinstance(script, os.PathLike):
        return True
    return "\n" not in script and script.endswith(".dml") and os.path.isfile(script)


def prepare(script: Union[str, os.PathLike], inputs: Iterable[str] = (), outputs: Iterable[str] = (),
            args: Optional[Mapping[str, Any]] = None, sparse: bool = False, frames: str = "auto",
            stdout: Any = None, loops: Optional[list] = None,
            compressed_linalg: Optional[Union[str, bool]] = None) -> Prepared:
    """Compiles a DML script (its text, or the path of a .dml file) for the
    declared inputs and outputs; run it with .execute(**inputs). sparse:
    sparse outputs as scipy CSR; frames: frame outputs as pandas DataFrames
    ("pandas"), dicts of columns ("dict") or DataFrames when pandas is
    installed ("auto"); stdout: where print() output goes (an object with
    write(), given the text of each run when it ends; None: the process's
    standard output); loops: a list each run extends by its loop
    statistics (one dict per loop statement: file, line, col, entries,
    iterations, max_iterations; braid_loops); compressed_linalg:
    sysds.compressed.linalg, "true", "false" (None: the default, false) or
    "auto" (docs/cla.md), given to the planner and the run time."""
    return Prepared(script, inputs, outputs, args, sparse, frames, stdout, loops, compressed_linalg)


def run(script: Union[str, os.PathLike], args: Optional[Mapping[str, Any]] = None,
        inputs: Optional[Mapping[str, Any]] = None, outputs: Sequence[str] = (),
        sparse: bool = False, frames: str = "auto", stdout: Any = None,
        loops: Optional[list] = None, compressed_linalg: Optional[Union[str, bool]] = None) -> Dict[str, Any]:
    """Runs a DML script once: run(script_or_path, args={...},
    inputs={name: value}, outputs=[names]) -> {name: value} (sparse,
    frames, stdout, loops and compressed_linalg as for prepare)."""
    inputs = dict(inputs or {})
    return prepare(script, inputs.keys(), outputs, args, sparse, frames, stdout, loops,
                   compressed_linalg).execute(**inputs)


# ---- the lazy API (lazy.py) and the builtins as functions (library.py) ----

from .lazy import Value, Matrix, Scalar, Frame, ListValue, compute, explain  # noqa: E402
from . import library as _builtins  # noqa: E402

__all__ += ["Value", "Matrix", "Scalar", "Frame", "ListValue", "compute", "explain", "builtins"]


def builtins() -> list:
    """The Python names of braid's builtin functions (braid.NAME(...))."""
    return _builtins.names()


def __getattr__(name: str):
    """braid.l2svm, braid.kmeans, braid.exp, ...: generated on first use."""
    if name.startswith("__"):
        raise AttributeError(name)
    return _builtins.get(name)


def __dir__() -> list:
    return sorted(set(globals()) | set(_builtins.names()))
