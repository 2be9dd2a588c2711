"""Builds the compiled extensions at install time: the decoder's engine (search loop, k-best,
matcher), :mod:`circle.decoder._cube`, the exact TER of Snover et al. (2006),
:mod:`circle.tune._ter`, MERT's upper envelopes, :mod:`circle.tune._envelope`, and forest
MERT's, :mod:`circle.tune._forest`.

All metadata is in pyproject.toml; ``pip install -e .`` compiles the extensions in place.
``-ffp-contract=off`` keeps the compiler from fusing multiply-adds, so the compiled code rounds
exactly as its pure-Python reference (the Python decoder, sacrebleu's TER) does.
"""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(ext_modules=cythonize(
    [Extension("circle.decoder._cube", ["src/circle/decoder/_cube.pyx"], language="c++",
               extra_compile_args=["-ffp-contract=off"]),
     Extension("circle.tune._ter", ["src/circle/tune/_ter.pyx"],
               extra_compile_args=["-ffp-contract=off"]),
     Extension("circle.tune._envelope", ["src/circle/tune/_envelope.pyx"],
               extra_compile_args=["-ffp-contract=off"]),
     Extension("circle.tune._forest", ["src/circle/tune/_forest.pyx"], language="c++",
               extra_compile_args=["-ffp-contract=off"])],
    compiler_directives={"language_level": 3}))
