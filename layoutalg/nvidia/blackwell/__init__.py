"""NVIDIA Blackwell (sm_100): ``umma`` (tcgen05.mma atoms), ``umma_smem`` (shared-memory operands),
``idesc`` (the instruction descriptor), ``descriptor`` (the sm_100 shared-memory descriptor),
``tmem`` / ``tmem_accum`` / ``tmem_copy`` (tensor memory), ``blockscale`` (scale-factor layouts),
``datapath`` (the ISA's TMEM data-path layouts, proven), ``sm103`` / ``sm120`` (the B300 and GeForce
Blackwell atoms) and ``atoms`` (CuTe's SM100_* / SM103_* / SM120_* atoms, registered in :mod:`layoutalg.registry`)."""
