"""NVIDIA Hopper (sm_90): ``wgmma`` (shared-memory layouts, atoms, tiles, descriptor derivation,
k-blocks), ``wgmma_fragments`` (register fragments), ``descriptor`` (the sm_90 matrix descriptor),
``tma`` (tensor maps from layouts, checked against wgmma; ``tensor_map``: the ``CUtensorMap``
fields, rules and placement) and ``atoms`` (CuTe's SM90_* wgmma and stmatrix atoms, registered in
:mod:`layoutalg.registry`)."""
