"""Builds the optional C fast paths (layoutalg/speedups/_ext.c); everything else is in pyproject.toml.

``optional=True``: without a C compiler the install goes on and layoutalg runs in pure Python.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("layoutalg.speedups._ext", ["layoutalg/speedups/_ext.c"], optional=True)])
