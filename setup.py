"""Builds the optional C fast paths (layoutalg/_speedups.c); everything else is in pyproject.toml.

``optional=True``: without a C compiler the install goes on and layoutalg runs in pure Python.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("layoutalg._speedups", ["layoutalg/_speedups.c"], optional=True)])
