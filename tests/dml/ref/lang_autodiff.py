"""Reference of cases/lang_autodiff.dml: autoDiff's three derivatives
equal the affine layer's backward pass (up to the products' rounding)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import wscalar  # noqa: E402

wscalar("n", 3)
wscalar("same", True)
wscalar("first", True)
