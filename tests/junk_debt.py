"""Exceptions other than LayoutError that junk arguments still raise: the open debt of tests/test_junk_everywhere.py.

Strike a line off when its callable is fixed; never add one (fix the callable instead).
"""

DEBT: dict[str, set[str]] = {
    "layoutalg.amd.cdna.isa.spellings": {'AttributeError'},
    "layoutalg.amd.cdna.mfma.blgp_lane": {'TypeError'},
    "layoutalg.amd.cdna.mfma.rule": {'AttributeError'},
    "layoutalg.amd.common.close_names": {'TypeError'},
    "layoutalg.amd.rdna.wmma.rule": {'AttributeError'},
}
