"""The lazy API: Python expressions that build one DML program.

    import numpy as np, braid
    X = braid.Matrix(np.random.rand(1000, 10))      # bound without a copy
    y = (X @ np.ones(10) > 5) * 2 - 1
    w = braid.l2svm(X, y, reg=1e-3)                  # the builtin library
    C, labels = braid.kmeans(X, k=3, seed=7)         # several outputs: a tuple
    w_np, C_np = braid.compute(w, C)                 # one run computes both
    print(w.explain())                               # the plan as text

Operators and builtins only record nodes; compute() writes the DAG below
its arguments as one DML script (one statement per node, so braid sees one
basic block: one HOP DAG that it rewrites, fuses and runs), compiles it
once per distinct script text (a small cache of prepared scripts), binds
the inputs (NumPy arrays without copies, as braid.run does) and runs it
with the GIL released. Python numbers become DML literals; Matrix(...),
Scalar(...) and Frame(...) values become bound inputs, so changing the
array does not recompile.
"""
import collections
import math
import os
import sys
import threading
from typing import Any, Dict, List as TList, Optional, Sequence, Tuple, Union

from ._braid import BraidError

try:
    import numpy as _np
except ImportError:
    _np = None

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))


class _Node:
    """One DML value: an input (value set), a literal (text set) or an
    expression over other nodes (fmt: DML text with {0}, {1}, ... for the
    arguments' variables; a call with several outputs has nout > 1 and its
    outputs are 'out' nodes)."""
    __slots__ = ("kind", "fmt", "args", "value", "text", "nout", "index", "src", "setidx", "__weakref__")

    def __init__(self, kind: str, fmt: Optional[str] = None, args: Sequence["_Node"] = (),
                 value: Any = None, text: Optional[str] = None, nout: int = 1, index: int = -1,
                 setidx: Optional[str] = None) -> None:
        self.kind = kind            # "matrix", "scalar", "frame", "list" or "call"
        self.fmt = fmt
        self.args = tuple(args)
        self.value = value
        self.text = text
        self.nout = nout
        self.index = index          # an output of a multi-output call
        self.setidx = setidx        # left indexing: target[setidx] = args[1]
        self.src = _caller()


def _caller() -> Optional[Tuple[str, int]]:
    """The first frame outside the package: where the user wrote the node."""
    f = sys._getframe(2)
    while f is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == _PKG_DIR:
        f = f.f_back
    return (f.f_code.co_filename, f.f_lineno) if f is not None else None


# ---- literals and operands ----

def _literal(v: Any) -> Optional[str]:
    """A Python scalar as DML literal text; None if v is no scalar."""
    if _np is not None and isinstance(v, _np.generic):
        v = v.item()
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return str(v) if -2 ** 63 <= v < 2 ** 63 else _literal(float(v))
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Inf" if v > 0 else "(-Inf)"
        t = repr(v)
        return "(" + t + ")" if v < 0 else t
    if isinstance(v, str):
        esc = v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
        return '"' + esc + '"'
    return None


def _operand(v: Any) -> Optional[_Node]:
    """A lazy value, a Python scalar (a literal) or an array (an input)."""
    if isinstance(v, Value):
        return v._n
    t = _literal(v)
    if t is not None:
        return _Node("scalar", text=t)
    if _np is not None and isinstance(v, _np.ndarray) or _is_sparse(v) or isinstance(v, list):
        return _Node("matrix", value=v)
    if type(v).__name__ == "DataFrame":
        return _Node("frame", value=v)
    return None


def _is_sparse(v: Any) -> bool:
    mod = type(v).__module__ or ""
    return mod.startswith("scipy.sparse")


def _wrap(n: _Node) -> "Value":
    return {"matrix": Matrix, "scalar": Scalar, "frame": Frame, "list": ListValue}.get(n.kind, Value)._of(n)


def _expr(kind: str, fmt: str, *args: Any) -> "Value":
    nodes = []
    for a in args:
        n = _operand(a)
        if n is None:
            raise TypeError(f"braid: cannot use a {type(a).__name__} in a DML expression")
        nodes.append(n)
    return _wrap(_Node(kind, fmt, nodes))


def _result_kind(*nodes: _Node) -> str:
    return "matrix" if any(n.kind == "matrix" for n in nodes) else "scalar"


# ---- the public handle types ----

class Value:
    """A lazy DML value; compute() runs the program that produces it."""
    __array_ufunc__ = None      # NumPy defers to our reflected operators
    __hash__ = object.__hash__  # == builds an expression; keep identity hashing

    _n: _Node

    @classmethod
    def _of(cls, n: _Node) -> "Value":
        v = object.__new__(cls)
        v._n = n
        return v

    def compute(self, sparse: bool = False, stdout: Any = None, loops: Optional[list] = None) -> Any:
        """Runs the program for this value; returns NumPy/SciPy/pandas or
        Python values (see braid.compute)."""
        return compute(self, sparse=sparse, stdout=stdout, loops=loops)

    def explain(self, kind: str = "hops") -> str:
        """The plan of the program computing this value (braid.explain)."""
        return explain(self, kind=kind)

    def _repr_svg_(self) -> str:
        """Jupyter: the plan as a picture with the fused operators
        coloured, explain("svg"): braid fuses once the inputs' sizes are
        known, so showing a value runs its program once (as compute()
        would) and draws the DAGs braid recompiled for it. A program
        whose run fails shows the plan compiled before the run."""
        from .plot import svg
        try:
            return explain(self, kind="svg")
        except BraidError:
            return svg(explain(self, kind="hops"))

    def script(self) -> str:
        """The DML text compute() would run."""
        return _Program([self._n]).text

    def __bool__(self) -> bool:
        raise TypeError("braid: the truth value of a lazy DML value is unknown before compute()")

    def __repr__(self) -> str:
        return f"braid.{type(self).__name__}(lazy; .compute() runs it)"

    # elementwise and comparison operators (Python semantics for // and %)
    def _bin(self, other: Any, fmt: str, swap: bool = False) -> "Value":
        o = _operand(other)
        if o is None:
            return NotImplemented
        a, b = (o, self._n) if swap else (self._n, o)
        kind = _result_kind(a, b)
        return _wrap(_Node(kind, fmt, (a, b)))

    def __add__(self, o): return self._bin(o, "{0} + {1}")
    def __radd__(self, o): return self._bin(o, "{0} + {1}", True)
    def __sub__(self, o): return self._bin(o, "{0} - {1}")
    def __rsub__(self, o): return self._bin(o, "{0} - {1}", True)
    def __mul__(self, o): return self._bin(o, "{0} * {1}")
    def __rmul__(self, o): return self._bin(o, "{0} * {1}", True)
    def __truediv__(self, o): return self._bin(o, "{0} / {1}")
    def __rtruediv__(self, o): return self._bin(o, "{0} / {1}", True)
    def __floordiv__(self, o): return self._bin(o, "floor({0} / {1})")
    def __rfloordiv__(self, o): return self._bin(o, "floor({0} / {1})", True)
    def __mod__(self, o): return self._bin(o, "{0} - floor({0} / {1}) * {1}")
    def __rmod__(self, o): return self._bin(o, "{0} - floor({0} / {1}) * {1}", True)
    def __pow__(self, o): return self._bin(o, "{0} ^ {1}")
    def __rpow__(self, o): return self._bin(o, "{0} ^ {1}", True)
    def __lt__(self, o): return self._bin(o, "{0} < {1}")
    def __le__(self, o): return self._bin(o, "{0} <= {1}")
    def __gt__(self, o): return self._bin(o, "{0} > {1}")
    def __ge__(self, o): return self._bin(o, "{0} >= {1}")
    def __eq__(self, o): return self._bin(o, "{0} == {1}")
    def __ne__(self, o): return self._bin(o, "{0} != {1}")
    def __and__(self, o): return self._bin(o, "{0} & {1}")
    def __rand__(self, o): return self._bin(o, "{0} & {1}", True)
    def __or__(self, o): return self._bin(o, "{0} | {1}")
    def __ror__(self, o): return self._bin(o, "{0} | {1}", True)
    def __neg__(self): return _wrap(_Node(self._n.kind, "-{0}", (self._n,)))
    def __pos__(self): return self
    def __invert__(self): return _wrap(_Node(self._n.kind, "!{0}", (self._n,)))
    def __abs__(self): return _wrap(_Node(self._n.kind, "abs({0})", (self._n,)))


def _input(kind: str, v: Any) -> _Node:
    return v._n if isinstance(v, Value) else _Node(kind, value=v)


class Scalar(Value):
    """A lazy DML scalar. Scalar(3.5) is a bound input (a new value does
    not recompile); Python numbers in expressions are literals."""

    def __new__(cls, value: Any) -> "Scalar":
        if isinstance(value, Value):
            return cls._of(value._n)
        if _literal(value) is None:
            raise TypeError(f"braid.Scalar: a {type(value).__name__} is no scalar")
        return cls._of(_Node("scalar", value=value))

    def __float__(self) -> float:
        return float(self.compute())

    def __int__(self) -> int:
        return int(self.compute())

    def __index__(self) -> int:
        return int(self.compute())


_AGG = {  # name: (all cells, columns (axis 0), rows (axis 1))
    "sum": ("sum", "colSums", "rowSums"), "mean": ("mean", "colMeans", "rowMeans"),
    "min": ("min", "colMins", "rowMins"), "max": ("max", "colMaxs", "rowMaxs"),
    "var": ("var", "colVars", "rowVars"), "sd": ("sd", "colSds", "rowSds"),
    "prod": ("prod", "colProds", "rowProds"),
}


def _agg(name: str):
    full, col, row = _AGG[name]

    def f(self, axis: Optional[int] = None) -> Value:
        if axis is None:
            return _wrap(_Node("scalar", f"{full}({{0}})", (self._n,)))
        if axis not in (0, 1, -1, -2):
            raise ValueError(f"braid: axis {axis} of a 2-D matrix")
        fn = col if axis in (0, -2) else row
        return _wrap(_Node("matrix", f"{fn}({{0}})", (self._n,)))
    f.__name__ = name
    f.__doc__ = (f"{name}(axis=None): {full}(X) (a Scalar), axis=0: {col}(X) (1 x n), "
                 f"axis=1: {row}(X) (n x 1)" + (" (DML divides by n-1)" if name in ("var", "sd") else ""))
    return f


def _unary(dml: str, kind: Optional[str] = None):
    def f(self) -> Value:
        return _wrap(_Node(kind or self._n.kind, f"{dml}({{0}})", (self._n,)))
    f.__name__ = dml
    f.__doc__ = f"{dml}(X) (DML)"
    return f


class Matrix(Value):
    """A lazy DML matrix. Matrix(array) binds a NumPy array (C-contiguous
    float64: no copy), a scipy.sparse matrix, a list of rows or a numeric
    pandas DataFrame (its values) as an input."""

    def __new__(cls, value: Any) -> "Matrix":
        if isinstance(value, Value):
            return cls._of(value._n)
        if type(value).__name__ == "DataFrame":
            value = value.to_numpy(dtype="float64")
        if _literal(value) is not None:
            raise TypeError("braid.Matrix: a scalar is no matrix (use braid.Scalar)")
        return cls._of(_Node("matrix", value=value))

    def __matmul__(self, o): return self._mm(o, False)
    def __rmatmul__(self, o): return self._mm(o, True)

    def _mm(self, other: Any, swap: bool) -> Value:
        o = _operand(other)
        if o is None or o.kind == "scalar":
            return NotImplemented
        a, b = (o, self._n) if swap else (self._n, o)
        return _wrap(_Node("matrix", "{0} %*% {1}", (a, b)))

    @property
    def T(self) -> "Matrix":
        """t(X)."""
        return _wrap(_Node("matrix", "t({0})", (self._n,)))

    sum = _agg("sum")
    mean = _agg("mean")
    min = _agg("min")
    max = _agg("max")
    var = _agg("var")
    sd = _agg("sd")
    prod = _agg("prod")
    exp = _unary("exp")
    log = _unary("log")
    sqrt = _unary("sqrt")
    abs = _unary("abs")
    round = _unary("round")
    floor = _unary("floor")
    ceil = _unary("ceil")
    sign = _unary("sign")
    sigmoid = _unary("sigmoid")
    nrow = _unary("nrow", "scalar")
    ncol = _unary("ncol", "scalar")
    colSums = _unary("colSums")
    rowSums = _unary("rowSums")
    colMeans = _unary("colMeans")
    rowMeans = _unary("rowMeans")
    colMaxs = _unary("colMaxs")
    rowMaxs = _unary("rowMaxs")
    colMins = _unary("colMins")
    rowMins = _unary("rowMins")
    rowIndexMax = _unary("rowIndexMax")
    rowIndexMin = _unary("rowIndexMin")
    cumsum = _unary("cumsum")

    def argmax(self, axis: int = 1) -> "Matrix":
        """0-based index of each row's maximum (axis=1; DML's rowIndexMax
        minus 1, the last column among ties) or each column's (axis=0)."""
        if axis in (1, -1):
            return _wrap(_Node("matrix", "rowIndexMax({0}) - 1", (self._n,)))
        return _wrap(_Node("matrix", "t(rowIndexMax(t({0}))) - 1", (self._n,)))

    def reshape(self, rows: int, cols: int) -> "Matrix":
        """matrix(X, rows, cols): row-major, as NumPy's reshape."""
        return _expr("matrix", "matrix({0}, rows={1}, cols={2})", self, rows, cols)

    def __getitem__(self, key: Any) -> Value:
        rows, cols = key if isinstance(key, tuple) else (key, slice(None))
        args = [self._n]
        r, rint = _range(rows, "nrow", args)
        c, cint = _range(cols, "ncol", args)
        if rint and cint:
            return _wrap(_Node("scalar", f"as.scalar({{0}}[{r}, {c}])", args))
        return _wrap(_Node("matrix", f"{{0}}[{r}, {c}]", args))

    def __setitem__(self, key: Any, value: Any) -> None:
        """X[rows, cols] = v (DML left indexing); X becomes the new value,
        values computed from X before keep the old one."""
        rows, cols = key if isinstance(key, tuple) else (key, slice(None))
        v = _operand(value)
        if v is None:
            raise TypeError(f"braid: cannot assign a {type(value).__name__}")
        args = [self._n, v]
        r, rn = _range(rows, "nrow", args)
        c, cn = _range(cols, "ncol", args)
        rhs = "{1}"
        if v.kind == "scalar" and not (rn and cn):   # NumPy broadcasts a number over the block
            rhs = f"matrix({{1}}, rows={_extent(r, 'nrow')}, cols={_extent(c, 'ncol')})"
        self._n = _Node("matrix", rhs, args, setidx=f"{r}, {c}")


def _index_expr(i: Any, dim: str, args: TList[_Node], plus: int) -> str:
    """A 0-based Python index (negative: from the end) as 1-based DML
    text, plus `plus`; a lazy Scalar index becomes an argument."""
    if isinstance(i, Value):
        args.append(i._n)
        return f"{{{len(args) - 1}}} + {1 + plus}"
    if _np is not None and isinstance(i, _np.integer):
        i = int(i)
    if not isinstance(i, int) or isinstance(i, bool):
        raise TypeError(f"braid: index {i!r}: only ints, slices and braid Scalars index a matrix")
    if i >= 0:
        return str(i + 1 + plus)
    return f"{dim}({{0}}) - {-i - 1 - plus}" if -i - 1 - plus else f"{dim}({{0}})"


def _extent(rng: str, dim: str) -> str:
    """The number of rows (columns) a DML range text spans."""
    if not rng:
        return f"{dim}({{0}})"
    lo, _, hi = rng.partition(":")
    return f"({hi}) - ({lo}) + 1" if hi else "1"


def _range(key: Any, dim: str, args: TList[_Node]) -> Tuple[str, bool]:
    """The DML range of one Python index: (text, is a single int)."""
    if isinstance(key, slice):
        if key.step not in (None, 1):
            raise ValueError("braid: slices with a step are not supported (DML ranges are contiguous)")
        if key.start is None and key.stop is None:
            return "", False
        lo = "1" if key.start is None else _index_expr(key.start, dim, args, 0)
        hi = f"{dim}({{0}})" if key.stop is None else _index_expr(key.stop, dim, args, -1)
        return f"{lo}:{hi}", False
    return _index_expr(key, dim, args, 0), not isinstance(key, Value)


class Frame(Value):
    """A lazy DML frame. Frame(df) binds a pandas DataFrame or a dict
    {column name: cells} as an input (copied; numeric columns by dtype,
    others as strings); computed frames come back as DataFrames."""

    def __new__(cls, value: Any) -> "Frame":
        if isinstance(value, Value):
            return cls._of(value._n)
        return cls._of(_Node("frame", value=value))

    def __getitem__(self, key: Any) -> "Frame":
        rows, cols = key if isinstance(key, tuple) else (key, slice(None))
        args = [self._n]
        r, _ = _range(rows, "nrow", args)
        c, _ = _range(cols, "ncol", args)
        return _wrap(_Node("frame", f"{{0}}[{r}, {c}]", args))

    def as_matrix(self) -> Matrix:
        """as.matrix(F): the frame's cells as numbers."""
        return _wrap(_Node("matrix", "as.matrix({0})", (self._n,)))


class ListValue(Value):
    """A lazy DML list (a builtin's list output); computed as braid.List."""

    def __getitem__(self, i: Union[int, str]) -> Value:
        key = _literal(i + 1 if isinstance(i, int) else i)
        return _wrap(_Node("matrix", f"as.matrix({{0}}[{key}])", (self._n,)))


# ---- builtin calls ----

def call(name: str, args: Sequence[Any], kwargs: Dict[str, Any], outputs: Sequence[str],
         positional: bool) -> Union[Value, Tuple[Value, ...]]:
    """A call of DML function `name`; outputs: the result kinds (one per
    output, "any": decided by the arguments). positional: pass positional
    arguments by position (else all arguments go by name, which the
    generated wrappers resolve)."""
    nodes, parts = [], []
    for a in args:
        n = _arg(name, a)
        nodes.append(n)
        parts.append(f"{{{len(nodes) - 1}}}")
    for k, a in kwargs.items():
        n = _arg(name, a)
        nodes.append(n)
        parts.append(f"{k}={{{len(nodes) - 1}}}")
    fmt = f"{name}({', '.join(parts)})"
    # an "any" result (a native builtin typed at run time) is a Matrix
    # handle when a matrix or frame goes in (so @, .T, indexing apply),
    # else a Scalar; compute() converts whatever it turns out to be
    anyk = "matrix" if any(n.kind in ("matrix", "frame") for n in nodes) else "scalar"
    kinds = [anyk if k == "any" else k for k in outputs]
    if len(kinds) == 1:
        return _wrap(_Node(kinds[0], fmt, nodes))
    c = _Node("call", fmt, nodes, nout=len(kinds))
    return tuple(_wrap(_Node(k, None, (c,), index=i)) for i, k in enumerate(kinds))


def _arg(fn: str, a: Any) -> _Node:
    n = _operand(a)
    if n is None and isinstance(a, dict):
        n = _Node("frame", value=a)
    if n is None:
        raise TypeError(f"braid.{fn}: cannot pass a {type(a).__name__}")
    return n


# ---- programs ----

class _Program:
    """The DML script computing the given nodes: inputs named in0, in1, ...
    (one per distinct bound object), every other node one statement
    assigning t1, t2, ...; literals inline. lines[i] is the node that
    line i + 1 comes from (error positions)."""

    def __init__(self, roots: Sequence[_Node]) -> None:
        self.names: Dict[int, str] = {}
        self.bound: Dict[str, Any] = {}       # input name -> value
        self.kinds: Dict[str, str] = {}       # input name -> kind
        self._objs: Dict[int, str] = {}       # id(bound object) -> input name
        self.lines: TList[Tuple[str, _Node]] = []
        for n in self._order(roots):
            self._emit(n)
        self.outputs = [self._ref(n) for n in roots]
        self.text = "\n".join(t for t, _ in self.lines) + "\n"

    @staticmethod
    def _order(roots: Sequence[_Node]) -> TList[_Node]:
        """Post-order without recursion (long chains of operators)."""
        seen, out = set(), []
        stack = [(n, False) for n in reversed(roots)]
        while stack:
            n, done = stack.pop()
            if done:
                out.append(n)
                continue
            if id(n) in seen:
                continue
            seen.add(id(n))
            stack.append((n, True))
            stack.extend((a, False) for a in reversed(n.args) if id(a) not in seen)
        return out

    def _ref(self, n: _Node) -> str:
        return n.text if n.text is not None else self.names[id(n)]

    def _emit(self, n: _Node) -> None:
        if n.text is not None:
            return
        if n.fmt is None and n.index < 0:   # a bound input
            key = id(n.value)
            name = self._objs.get(key)
            if name is None:
                name = self._objs[key] = f"in{len(self._objs)}"
                self.bound[name] = n.value
                self.kinds[name] = n.kind
            self.names[id(n)] = name
            return
        if n.index >= 0:                    # an output of a multi-output call
            self.names[id(n)] = self.names[id(n.args[0])][n.index]
            return
        args = [self._ref(a) for a in n.args]
        if n.nout > 1:
            outs = [self._fresh() for _ in range(n.nout)]
            self.names[id(n)] = outs
            self.lines.append((f"[{', '.join(outs)}] = " + n.fmt.format(*args), n))
            return
        name = self._fresh()
        self.names[id(n)] = name
        if n.setidx is not None:
            self.lines.append((f"{name} = {args[0]}", n))
            self.lines.append((f"{name}[{n.setidx.format(*args)}] = {n.fmt.format(*args)}", n))
        else:
            self.lines.append((f"{name} = " + n.fmt.format(*args), n))

    def _fresh(self) -> str:
        self._count = getattr(self, "_count", 0) + 1
        return f"t{self._count}"


class _Cache:
    """Prepared scripts by (text, outputs), least recently used first. A
    Prepared is taken out while it runs, so threads computing the same
    program each get their own."""

    def __init__(self, size: int = 32) -> None:
        self.size = size
        self.lock = threading.Lock()
        self.free: "collections.OrderedDict[tuple, list]" = collections.OrderedDict()

    def take(self, key: tuple, make) -> Any:
        with self.lock:
            stack = self.free.get(key)
            if stack:
                self.free.move_to_end(key)
                return stack.pop()
        return make()

    def give(self, key: tuple, p: Any) -> None:
        with self.lock:
            self.free.setdefault(key, []).append(p)
            self.free.move_to_end(key)
            while len(self.free) > self.size:
                self.free.popitem(last=False)


_cache = _Cache()


def _prepare(prog: _Program, outs: Sequence[str]):
    from . import Prepared
    key = (prog.text, tuple(prog.bound), tuple(outs))
    try:
        p = _cache.take(key, lambda: Prepared(prog.text, list(prog.bound), list(outs)))
    except BraidError as e:
        raise _located(e, prog) from None
    return key, p


def _located(e: BraidError, prog: _Program) -> BraidError:
    """braid's error with the generated DML line and the Python line that
    built it; an error inside a library function (its position is in
    scripts/builtin/NAME.dml) names the line calling NAME."""
    msg = str(e)
    head = msg.split(":", 3)
    line = 0
    if len(head) >= 3 and head[0] == "<script>" and head[1].isdigit():
        line = int(head[1])
    elif len(head) >= 3 and head[0].endswith(".dml") and head[1].isdigit():
        fn = os.path.basename(head[0])[:-4]
        line = next((i + 1 for i, (t, _) in enumerate(prog.lines)
                     if t.split(" = ", 1)[-1].startswith(fn + "(")), 0)
    if 1 <= line <= len(prog.lines):
        text, node = prog.lines[line - 1]
        where = f"{node.src[0]}:{node.src[1]}" if node.src else "?"
        msg += f"\n  in the DML line {line}: {text}\n  built at {where}"
    return BraidError(msg)


def _bind_inputs(p: Any, prog: _Program) -> None:
    from . import _bind
    for name, v in prog.bound.items():
        if prog.kinds[name] == "frame" and type(v).__name__ == "DataFrame":
            from . import _pandas_column
            v = {str(k): _pandas_column(c) for k, c in v.items()}
        _bind(p._s, name, v)


def compute(*values: Value, sparse: bool = False, stdout: Any = None, loops: Optional[list] = None) -> Any:
    """Computes lazy values in one run of one DML program; returns the
    value (one argument) or a tuple. Matrices come back as NumPy arrays
    over braid's storage (sparse=True: scipy CSR where braid holds them
    sparse), scalars as Python values, frames as pandas DataFrames (dicts
    without pandas), lists as braid.List. stdout: where what the program
    prints goes (an object with write(), e.g. io.StringIO or sys.stdout
    in Jupyter, given the text when the run ends; None: the process's
    standard output, as it runs). loops: a list the run extends by its
    loop statistics (braid.prepare), e.g. a builtin's iteration count."""
    from . import _value, _execute, _frames_kind
    if not values:
        return ()
    for v in values:
        if not isinstance(v, Value):
            raise TypeError(f"braid.compute: a {type(v).__name__} is no lazy braid value")
    prog = _Program([_variable(v._n) for v in values])
    outs = list(dict.fromkeys(prog.outputs))
    key, p = _prepare(prog, outs)
    try:
        _bind_inputs(p, prog)
        _execute(p._s, stdout, loops)
        res = {o: _value(p._s.get(o, not sparse), _frames_kind("auto")) for o in outs}
    except BraidError as e:
        raise _located(e, prog) from None
    finally:
        _cache.give(key, p)
    got = [res[o] for o in prog.outputs]
    return got[0] if len(got) == 1 else tuple(got)


def _variable(n: _Node) -> _Node:
    """A node that is a variable of the program: a literal is assigned
    to one (an output must be a variable)."""
    return _Node(n.kind, "{0}", (n,)) if n.text is not None else n


def explain(*values: Value, kind: str = "hops") -> str:
    """The plan of the program computing values: kind "dml" (the generated
    script), "hops" or "runtime" (the compiled plan; inputs' sizes unknown),
    "dot" (Graphviz: one digraph per statement block; "dot_all" with
    the builtin library's functions), "recompile_hops": runs the program once and
    returns the DAGs braid recompiled with the inputs' sizes, where fused
    operators (spoof*) show, "recompile_dot": those DAGs as Graphviz
    digraphs (one per recompiled DAG, as `-explain recompile_dot` writes
    them into files), or "svg": those DAGs drawn (braid.plot)."""
    if kind == "svg":    # the recompiled DAGs (or the static ones) drawn
        from .plot import svg
        return svg(explain(*values, kind="recompile_hops") or explain(*values, kind="hops"))
    prog = _Program([_variable(v._n) for v in values])
    if kind == "dml":
        return prog.text
    outs = list(dict.fromkeys(prog.outputs))
    rerun = kind in ("recompile_hops", "recompile_dot")
    if rerun:
        # a fresh script: a cached one may reuse its earlier recompilation
        # for the same sizes, which braid does not print again
        from . import Prepared
        try:
            p = Prepared(prog.text, list(prog.bound), outs)
        except BraidError as e:
            raise _located(e, prog) from None
        key = None
    else:
        key, p = _prepare(prog, outs)
    try:
        if not rerun:
            return p._s.explain(kind)
        _bind_inputs(p, prog)
        p._s.trace_recompile(True)
        try:
            p._s.execute()
        finally:
            p._s.trace_recompile(False)
        return p._s.explain(kind)
    except BraidError as e:
        raise _located(e, prog) from None
    finally:
        if key is not None:
            _cache.give(key, p)
