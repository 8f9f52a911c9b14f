"""Real kernels read: Triton's and Gluon's compiled ttgir as layoutalg layouts and a data-path report.

* :mod:`~layoutalg.kernel.mlir`: MLIR text by a grammar (tokens, attributes, types; nothing evaluated);
* :mod:`~layoutalg.kernel.layouts`: every layout attribute (``#ttg.blocked``, ``slice``, ``dot_op``,
  ``nvidia_mma``, ``linear``, ``nvmma_shared``, ``swizzled_shared``, ``padded_shared``, ``shared_linear``,
  ``#ttng.tensor_memory_encoding`` / ``tensor_memory_scales_encoding``) as a :class:`KernelLayout`;
* :mod:`~layoutalg.kernel.ttgir`: a module (aliases, module attributes, locations, data-moving ops);
* :mod:`~layoutalg.kernel.report`: :func:`inspect_ttgir` -> :class:`KernelReport` (source lines, layouts,
  shared-memory wavefronts and bank conflicts);
* :mod:`~layoutalg.kernel.ptx`: :func:`check_ptx`, the wgmma descriptors and tcgen05 instruction
  descriptors in the kernel's PTX against their derivation from the ttgir;
* :mod:`~layoutalg.kernel.pipeline` (+ ``pipeline_sm80``, ``pipeline_sm100``): a GEMM tile's data path as one
  :class:`Pipeline` (``hopper_pipeline``, ``hopper_rs_pipeline``, ``ampere_pipeline``, ``blackwell_pipeline``);
  :mod:`~layoutalg.kernel.proof`: :func:`prove` -> :class:`Proof` (every product lands where the epilogue
  writes its output, or the first wrong element).
* :mod:`~layoutalg.kernel.amd`: ``#ttg.amd_mfma`` / ``amd_wmma`` and their operands as Triton's linear layouts;
* :mod:`~layoutalg.kernel.pyfile`: :func:`inspect_python`, a ``.py`` file's Triton / Gluon kernel compiled on the
  CPU and inspected (importing the file runs it);
* :mod:`~layoutalg.kernel.cute_prints`: :func:`inspect_cute_prints`, a CuTe setup's prints reported alike;
* :mod:`~layoutalg.kernel.pictures`: :func:`report_html` / :func:`write_svgs`, the report's pictures.
* :mod:`~layoutalg.kernel.plan`: :func:`plan_gemm` -> :class:`TilePlan`, a GEMM tile's data path planned as
  CuTe's and the CuTe DSL's helpers plan it (``layoutalg plan``).

``layoutalg inspect FILE [--ptx PTX] [--svg DIR] [--html FILE]`` prints the report (and the descriptor checks).
"""

from .layouts import LAYOUT_ATTRIBUTES, KernelLayout, read_layout
from .mlir import parse_attribute, parse_type
from .plan import OperandPlan, PlanError, TilePlan, plan_gemm
from .ptx import DescriptorCheck, check_ptx, ptx_tcgen05_idescs, ptx_wgmma_words
from .report import KernelReport, OpReport, ValueInfo, element_bits, inspect_module, inspect_ttgir
from .ttgir import DATA_OPS, Op, TtgirModule, read_ttgir
from .pipeline import Pipeline, Stage, hopper_pipeline
from .pipeline_rs import hopper_rs_pipeline
from .pipeline_sm80 import ampere_pipeline
from .pipeline_sm100 import blackwell_pipeline
from .proof import Proof, prove
from .cute_prints import CuteReport, inspect_cute_prints
from .pictures import report_html, report_pictures, write_svgs
from .pyfile import PythonInspection, inspect_python

__all__ = ["inspect_ttgir", "inspect_module", "KernelReport", "OpReport", "ValueInfo", "read_ttgir", "TtgirModule",
           "Op", "DATA_OPS", "KernelLayout", "read_layout", "LAYOUT_ATTRIBUTES", "parse_attribute", "parse_type",
           "element_bits", "check_ptx", "DescriptorCheck", "ptx_wgmma_words", "ptx_tcgen05_idescs",
           "Pipeline", "Stage", "hopper_pipeline", "hopper_rs_pipeline", "ampere_pipeline", "blackwell_pipeline", "Proof", "prove",
           "inspect_cute_prints", "CuteReport", "inspect_python", "PythonInspection", "report_html", "report_pictures",
           "write_svgs",
           "plan_gemm", "TilePlan", "OperandPlan", "PlanError"]
