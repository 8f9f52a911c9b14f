"""What the NVIDIA generations share: ``dtypes``, ``ptx_formulas``, ``fragment`` (the Fragment type,
:func:`~layoutalg.nvidia.common.fragment.parse_mnk`), ``descriptor`` (the 64-bit shared-memory
descriptor words: sm_90's ``MatrixDescriptor`` and its sm_100 extension ``Tcgen05Descriptor``) and
``atom_types`` (the type spellings of atom names, copy value types)."""
