"""setup.py: the Python package braid for pip (pyproject.toml names it).

make builds the C extension (the Makefile's `python` target: _braid.c
against the running Python's headers, linked with libbraid.a and the
libraries braid uses), so pip and make build the same thing; this file
copies it, the modules of python/braid and the builtin DML library
(scripts/builtin, which the package points braid at when imported) into
the wheel. BRAID_MAKE_ARGS (e.g. "SAN=1" or "BUILD=build-x") is passed
to make. Offline, with Debian's setuptools and wheel:
    python3 -m pip install --no-build-isolation .
A source distribution carries what `make python` compiles (the folders
the Makefile's sdist-dirs target names: braid's C sources, the
extension, the builtin library, tools/deps.sh) besides the Makefile, so
it builds anywhere braid's Debian packages are installed:
    python3 setup.py sdist      # dist/braid-<version>.tar.gz
    python3 -m pip install --no-build-isolation dist/braid-<version>.tar.gz
"""
import os
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

ROOT = os.path.dirname(os.path.abspath(__file__))
os.makedirs(os.path.join(ROOT, "build", "setuptools"), exist_ok=True)


def make(*targets: str) -> str:
    """Runs make in the source tree; returns its standard output. The
    variables of a make that runs pip (make test) are dropped: this make
    is a separate one, not a sub-make sharing a jobserver."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    args = ["make", "-s", "--no-print-directory", "-C", ROOT]
    extra = shlex.split(os.environ.get("BRAID_MAKE_ARGS", ""))
    if not any(a.startswith("-j") for a in extra):   # a build from the sdist compiles all of braid
        args.append(f"-j{len(os.sched_getaffinity(0))}")
    args += extra
    python = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    if shutil.which(python + "-config"):   # this Python's headers, not only Debian's python3
        args.append("PY=" + python)
    out = subprocess.run(args + list(targets), env=env, check=True, stdout=subprocess.PIPE, text=True)
    return out.stdout


class MakeExt(build_ext):
    """The extension as make builds it (no compiler calls of setuptools)."""

    def build_extension(self, ext: Extension) -> None:
        make("python")
        built = os.path.join(make("python-dir").strip(), "_braid.so")
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(built, dest)


class PyWithLibrary(build_py):
    """The modules plus the builtin library as braid/scripts/builtin."""

    def run(self) -> None:
        super().run()
        src = os.path.join(ROOT, "scripts", "builtin")
        dest = os.path.join(self.build_lib, "braid", "scripts", "builtin")
        os.makedirs(dest, exist_ok=True)
        for name in sorted(os.listdir(src)):
            if name.endswith(".dml"):
                self.copy_file(os.path.join(src, name), os.path.join(dest, name))


class SdistWithSources(sdist):
    """setuptools' files (setup.py, pyproject.toml, README.md, the
    modules, the egg-info) plus the Makefile, the package's readme and every file of
    what make names in sdist-dirs (a folder whole, less Python's
    caches), so the tarball holds all that setup.py's make needs."""

    def make_release_tree(self, base_dir: str, files: list) -> None:
        extra = ["Makefile", "docs/python.md"]
        for entry in make("sdist-dirs").split():
            if os.path.isfile(os.path.join(ROOT, entry)):
                extra.append(entry)
                continue
            for top, dirs, names in os.walk(os.path.join(ROOT, entry)):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                rel = os.path.relpath(top, ROOT)
                extra.extend(os.path.join(rel, f) for f in sorted(names) if not f.endswith(".pyc"))
        super().make_release_tree(base_dir, sorted(set(files) | set(extra)))

setup(
    packages=["braid"],
    package_dir={"braid": "python/braid"},
    ext_modules=[Extension("braid._braid", sources=[])],
    cmdclass={"build_ext": MakeExt, "build_py": PyWithLibrary, "sdist": SdistWithSources},
    # setuptools' own build folder inside make's (build/ is make's)
    options={"build": {"build_base": os.path.join("build", "setuptools")},
             "egg_info": {"egg_base": os.path.join("build", "setuptools")}},
    zip_safe=False,
)
