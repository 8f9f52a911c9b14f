"""Interop: layoutalg's layouts in and out of the field's other tools (CuTe C++, the CuTe DSL, Triton/Gluon).

Each submodule imports its tool lazily, inside the functions that need it, so importing
``layoutalg.interop`` costs nothing and needs none of them installed.
"""
