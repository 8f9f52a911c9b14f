"""NVIDIA Ampere (sm_80) and the older warp-level MMAs CuTe keeps (sm_70 quadpairs, sm_75): ``mma``
(mma.sync / mma.sp register fragments), ``ldmatrix`` (ldmatrix / stmatrix maps) and ``atoms``
(CuTe's SM80_* / SM75_* / SM70_* atoms, registered in :mod:`layoutalg.registry`)."""
