"""Builds the decoder's compiled engine (search loop, k-best, matcher),
:mod:`circle.decoder._cube`, at install time.

All metadata is in pyproject.toml; ``pip install -e .`` compiles the extension in place.
``-ffp-contract=off`` keeps the compiler from fusing multiply-adds, so the compiled loop rounds
exactly as the pure-Python reference does.
"""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(ext_modules=cythonize(
    [Extension("circle.decoder._cube", ["src/circle/decoder/_cube.pyx"], language="c++",
               extra_compile_args=["-ffp-contract=off"])],
    compiler_directives={"language_level": 3}))
