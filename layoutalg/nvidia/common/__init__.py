"""What the NVIDIA generations share: ``dtypes``, ``ptx_formulas``, ``fragment`` (the Fragment type,
:func:`~layoutalg.nvidia.common.fragment.parse_mnk`), ``descriptor`` (the common format of the 64-bit
shared-memory descriptor words: field encoding and checks, ``DerivedDescriptor``) and
``atom_types`` (the type spellings of atom names, copy value types)."""
