"""braid's builtin functions as lazy Python functions, generated from the
signatures braid itself resolves (native builtins of its operator table,
base/ops.def, and DML functions of the builtin library, scripts/builtin):

    w = braid.l2svm(X, y, reg=1e-3)           # a braid.Matrix
    C, Y = braid.kmeans(X, k=5, seed=1)       # several outputs: a tuple
    braid.cbind(A, B), braid.exp(X), braid.rand(rows=3, cols=2, seed=7)

A DML name with a dot is spelt with an underscore (as.matrix: as_matrix);
a parameter that is a Python keyword takes a trailing underscore
(lambda_=...). Library functions take their parameters by position or by
name and check them in Python; native builtins pass positional arguments
through (braid's compiler checks them, errors name the Python line).
Builtins with side effects (print, write, stop, ...) are not offered.
"""
import inspect
import re
import keyword
import threading
from typing import Any, Callable, Dict, List, Optional

from . import _braid, lazy

_lock = threading.Lock()
_made: Dict[str, Callable] = {}
_names: Optional[Dict[str, str]] = None   # Python name -> DML name

_KIND = {"matrix": "Matrix", "scalar": "Scalar", "frame": "Frame", "list": "ListValue", "any": "Value"}


def _table() -> Dict[str, str]:
    global _names
    if _names is None:
        _names = {n.replace(".", "_"): n for n in _braid.builtin_names()}
    return _names


def names() -> List[str]:
    """The Python names of braid's builtin functions (sorted)."""
    return sorted(_table())


class _Default:
    """A DML default in a Python signature (shown as braid prints it)."""

    def __init__(self, text: str) -> None:
        neg = re.fullmatch(r"\(neg ([^()\s]+)\)", text)   # braid prints -1 as (neg 1)
        self.text = "-" + neg.group(1) if neg else text

    def __repr__(self) -> str:
        return self.text


def _pyname(p: str) -> str:
    return p + "_" if keyword.iskeyword(p) else p


def _doc(sig: dict) -> str:
    def one(p):
        t = p[1] + (f"[{p[2]}]" if p[2] else "")
        return f"    {p[0] or '(result)'}: {t}" + (f" = {_Default(p[3])!r}" if p[3] is not None else "")
    src = f"the builtin library's {sig['file']}" if sig["library"] else "a native builtin of braid (base/ops.def)"
    return (f"braid.{sig['name'].replace('.', '_')}: DML's {sig['name']}, {src}; lazy "
            f"(compute() runs it).\n\nParameters:\n" + "\n".join(one(p) for p in sig["inputs"]) +
            ("\n    ...: further positional arguments" if sig["varargs"] else "") +
            "\n\nReturns" + (" a tuple of" if len(sig["outputs"]) > 1 else "") + ":\n" +
            "\n".join(one(p) for p in sig["outputs"]))


def _make(dml: str) -> Callable:
    sig = _braid.builtin_signature(dml)
    if sig["sidefx"]:
        raise AttributeError(f"braid.{dml}: a builtin with side effects is not offered by the lazy API")
    params = [p[0] for p in sig["inputs"]]
    required = [p[0] for p in sig["inputs"] if p[3] is None]
    outs = [p[1] for p in sig["outputs"]]
    library = sig["library"]
    byname = {_pyname(p): p for p in params}

    def f(*args: Any, **kwargs: Any) -> Any:
        kw = {}
        for k, v in kwargs.items():
            if k not in byname:
                raise TypeError(f"braid.{f.__name__}() got an unexpected keyword argument '{k}' "
                                f"(parameters: {', '.join(byname)})")
            kw[byname[k]] = v
        if not library:
            return lazy.call(dml, args, kw, outs, positional=True)
        if len(args) > len(params):
            raise TypeError(f"braid.{f.__name__}() takes {len(params)} arguments ({len(args)} given)")
        named = dict(zip(params, args))
        for k in kw:
            if k in named:
                raise TypeError(f"braid.{f.__name__}() got multiple values for argument '{k}'")
        named.update(kw)
        missing = [p for p in required if p not in named]
        if missing:
            raise TypeError(f"braid.{f.__name__}() missing required arguments: {', '.join(missing)}")
        return lazy.call(dml, (), named, outs, positional=False)

    f.__name__ = f.__qualname__ = dml.replace(".", "_")
    f.__doc__ = _doc(sig)
    ann = lambda t: getattr(lazy, _KIND.get(t, "Value"))
    try:
        f.__signature__ = inspect.Signature(
            [inspect.Parameter(_pyname(p[0]), inspect.Parameter.POSITIONAL_OR_KEYWORD,
                               default=inspect.Parameter.empty if p[3] is None else _Default(p[3]),
                               annotation=ann(p[1])) for p in sig["inputs"]] +
            ([inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL)] if sig["varargs"] else []),
            return_annotation=tuple if len(outs) > 1 else ann(outs[0]))
    except ValueError:   # a native parameter list Python cannot spell: keep (*args, **kwargs)
        pass
    return f


def get(name: str) -> Callable:
    """The lazy function for builtin `name` (Python or DML spelling);
    AttributeError if braid has no such builtin."""
    dml = _table().get(name) or (name if name in _table().values() else None)
    if dml is None:
        raise AttributeError(f"module 'braid' has no attribute '{name}' (and braid has no builtin '{name}')")
    with _lock:
        f = _made.get(dml)
    if f is None:
        try:
            f = _make(dml)
        except _braid.BraidError as e:
            raise AttributeError(f"braid.{name}: {e}") from None
        with _lock:
            _made[dml] = f
    return f
