"""AMD matrix-core layouts (vendor ``"amd"``): the slot for AMD's generations, shaped as :mod:`layoutalg.nvidia`.

Each family of GPUs gets a subfolder -- ``cdna3`` (MI300), ``cdna4`` (MI350), ``rdna3``, ``rdna4``,
``gfx1250`` -- holding its MFMA / WMMA register fragments and an ``atoms`` module that registers its
MMA and copy atoms into :mod:`layoutalg.registry` (``AtomFamily("amd", "cdna3", "mma", "mfma", ...)``)
when imported; what the families share goes in ``amd/common``. The package root adds an ``"amd"``
provider (:func:`layoutalg.registry.add_provider`) so the atoms load on first lookup, as NVIDIA's do.
Nothing is here yet.
"""

__all__: list[str] = []
