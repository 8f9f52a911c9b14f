"""A Python file with a ``@triton.jit`` or ``@gluon.jit`` kernel, compiled with Triton on the CPU and inspected.

:func:`inspect_python` imports the file -- **importing a Python file runs it**: only inspect files you would
run -- finds the kernel, compiles it for the target with Triton (no GPU: the compiler's stages run on the
CPU, up to the ttgir and, for NVIDIA targets, the PTX) and returns the :class:`~layoutalg.kernel.report.KernelReport`
of its ttgir, with the PTX's descriptors checked (:func:`~layoutalg.kernel.ptx.check_ptx`).

The compile needs the kernel's arguments. They come from a module-level dictionary in the file::

    LAYOUTALG_INSPECT = {"kernel": "matmul", "signature": {"a": "*fp16", "b": "*fp16", "M": "i32"},
                         "constexprs": {"BM": 128}, "target": "sm_90a", "num_warps": 4, "num_stages": 3}

or from the command line (``--kernel``, ``--signature 'a:*fp16,b:*fp16,M:i32'``, ``--constexpr 'BM=128'``,
``--target``, ``--num-warps``, ``--num-stages``), which override it. The flag texts are read by the small
grammars :func:`parse_signature` and :func:`parse_constexprs` (names, Triton type names, integers, floats,
booleans and bare words; nothing is evaluated). Constexprs that are objects (a Gluon layout) can only come
from the dictionary. Targets: ``sm_80``, ``sm_90a``, ``sm_100a`` (``sm_90`` / ``cuda:90`` too) and AMD's
``gfx942``, ``gfx950`` (wave64), ``gfx1100``, ``gfx1200`` (wave32).

    >>> parse_signature("a:*fp16, b:*fp16, M:i32")
    {'a': '*fp16', 'b': '*fp16', 'M': 'i32'}
    >>> parse_constexprs("BM=128, EVEN=true, EPS=1e-5, DT=fp16")
    {'BM': 128, 'EVEN': True, 'EPS': 1e-05, 'DT': 'fp16'}
    >>> parse_target("sm_90a"), parse_target("gfx942"), parse_target("gfx1200")
    (('cuda', 90, 32), ('hip', 'gfx942', 64), ('hip', 'gfx1200', 32))
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any

from ..errors import LayoutError
from .report import KernelReport, inspect_ttgir

__all__ = ["InspectConfig", "parse_signature", "parse_constexprs", "parse_target", "compile_kernel",
           "inspect_python", "PythonInspection"]

_NAME = r"[A-Za-z_]\w*"
_TYPE = r"\*?k?[A-Za-z_][\w]*|tensordesc<[^>]*>|constexpr"


def parse_signature(text: str) -> dict[str, str]:
    """``'a:*fp16, b:*fp16, M:i32'`` -> ``{'a': '*fp16', ...}`` (Triton's signature type names)."""
    if not isinstance(text, str):
        raise LayoutError(f"parse_signature: expected text like 'a:*fp16,M:i32', got {type(text).__name__}")
    out: dict[str, str] = {}
    for i, item in enumerate(_split(text)):
        m = re.fullmatch(rf"\s*({_NAME})\s*:\s*({_TYPE})\s*", item)
        if m is None:
            raise LayoutError(f"--signature item {i + 1} {item.strip()!r}: expected NAME:TYPE (a:*fp16, M:i32, "
                              f"d:tensordesc<fp16[64, 64]>)")
        if m[1] in out:
            raise LayoutError(f"--signature: {m[1]} is given twice")
        out[m[1]] = m[2]
    return out


def _split(text: str) -> list[str]:
    """Comma-separated items, commas inside <...> or [...] kept."""
    items, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "<[" and 1 or (ch in ">]" and -1 or 0)
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip() or items:
        items.append(cur)
    return [s for s in items if s.strip()]


def _scalar(text: str, where: str) -> Any:
    s = text.strip()
    if re.fullmatch(r"[+-]?\d+", s):
        return int(s)
    if re.fullmatch(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?", s):
        return float(s)
    if s in ("true", "True"):
        return True
    if s in ("false", "False"):
        return False
    if re.fullmatch(r"[A-Za-z_][\w.]*", s):
        return s
    raise LayoutError(f"{where}: {s!r} is no integer, number, boolean or name")


def parse_constexprs(text: str) -> dict[str, Any]:
    """``'BM=128, EVEN=true, DT=fp16'`` -> ``{'BM': 128, 'EVEN': True, 'DT': 'fp16'}`` (ints, floats, booleans,
    names; nothing evaluated)."""
    if not isinstance(text, str):
        raise LayoutError(f"parse_constexprs: expected text like 'BM=128', got {type(text).__name__}")
    out: dict[str, Any] = {}
    for i, item in enumerate(_split(text)):
        m = re.fullmatch(rf"\s*({_NAME})\s*=\s*(.+?)\s*", item)
        if m is None:
            raise LayoutError(f"--constexpr item {i + 1} {item.strip()!r}: expected NAME=VALUE")
        out[m[1]] = _scalar(m[2], f"--constexpr {m[1]}")
    return out


def parse_target(text: Any) -> tuple[str, Any, int]:
    """(backend, arch, warp size) of a target name: ``sm_80``, ``sm_90a``, ``sm_100a``, ``cuda:90``, ``gfx942``..."""
    if isinstance(text, int) and not isinstance(text, bool):
        return ("cuda", text, 32)
    if not isinstance(text, str):
        raise LayoutError(f"target {text!r}: expected a name like sm_90a or gfx942")
    s = text.strip().lower()
    m = re.fullmatch(r"(?:sm_?|cuda:)(\d+)a?", s)
    if m:
        return ("cuda", int(m[1]), 32)
    m = re.fullmatch(r"(?:hip:)?(gfx[0-9a-f]+)", s)
    if m:
        arch = m[1]
        wave = 32 if re.fullmatch(r"gfx1[0-9a-f]{3}", arch) else 64
        return ("hip", arch, wave)
    raise LayoutError(f"target {text!r}: expected sm_80, sm_90a, sm_100a (cuda:N) or an AMD gfx name (gfx942, gfx950, "
                      "gfx1100, gfx1200)")


@dataclass
class InspectConfig:
    """What a compile needs: the kernel's name, its signature and constexprs, the target and launch options."""

    kernel: str | None = None
    signature: dict[str, str] = field(default_factory=dict)
    constexprs: dict[str, Any] = field(default_factory=dict)
    target: Any = "sm_90a"
    num_warps: int = 4
    num_stages: int = 3

    def merged(self, **given: Any) -> InspectConfig:
        """This configuration with the given fields (those not None) replacing its own."""
        out = InspectConfig(self.kernel, dict(self.signature), dict(self.constexprs), self.target, self.num_warps,
                            self.num_stages)
        for k, v in given.items():
            if v is None:
                continue
            if k == "constexprs":
                out.constexprs.update(v)
            elif k == "signature":
                out.signature.update(v)
            else:
                setattr(out, k, v)
        return out


_FIELDS = {"kernel", "signature", "constexprs", "target", "num_warps", "num_stages"}


def _config_from(value: Any, path: str) -> InspectConfig:
    if not isinstance(value, dict):
        raise LayoutError(f"{path}: LAYOUTALG_INSPECT must be a dict ({', '.join(sorted(_FIELDS))}), got "
                          f"{type(value).__name__}")
    unknown = set(value) - _FIELDS
    if unknown:
        raise LayoutError(f"{path}: LAYOUTALG_INSPECT has unknown keys {sorted(unknown)} (known: {sorted(_FIELDS)})")
    sig = value.get("signature", {})
    if isinstance(sig, str):
        sig = parse_signature(sig)
    consts = value.get("constexprs", {})
    if isinstance(consts, str):
        consts = parse_constexprs(consts)
    if not isinstance(sig, dict) or not isinstance(consts, dict):
        raise LayoutError(f"{path}: LAYOUTALG_INSPECT's signature and constexprs are dicts (or flag text)")
    return InspectConfig(value.get("kernel"), dict(sig), dict(consts), value.get("target", "sm_90a"),
                         int(value.get("num_warps", 4)), int(value.get("num_stages", 3)))


def load_python(path: str) -> Any:
    """Import the file at ``path`` as a module (this runs it)."""
    if not isinstance(path, str) or not os.path.isfile(path):
        raise LayoutError(f"{path!r}: no such Python file")
    name = "layoutalg_inspect_" + hashlib.sha1(os.path.abspath(path).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise LayoutError(f"{path}: cannot be imported as a Python module")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001 - the user's file raised while it ran: say where
        sys.modules.pop(name, None)
        raise LayoutError(f"{path}: importing the file failed: {type(e).__name__}: {e}") from None
    return mod


def _kernels(mod: Any) -> dict[str, Any]:
    out = {}
    for k, v in vars(mod).items():
        if type(v).__name__ in ("JITFunction", "GluonJITFunction") and hasattr(v, "fn"):
            out[k] = v
    return out


def _signature(fn: Any, cfg: InspectConfig, path: str) -> dict[str, str]:
    params = [p.name for p in fn.params] if hasattr(fn, "params") else list(fn.arg_names)
    sig = {}
    for p in params:
        if p in cfg.constexprs:
            sig[p] = "constexpr"
        elif p in cfg.signature:
            sig[p] = cfg.signature[p]
        else:
            raise LayoutError(f"{path}: kernel {fn.__name__}'s argument {p!r} has no type (give it in --signature "
                              f"'{p}:i32' or a constexpr value in --constexpr '{p}=...')")
    extra = (set(cfg.signature) | set(cfg.constexprs)) - set(params) - {"num_warps"}
    if extra:
        raise LayoutError(f"{path}: kernel {fn.__name__} has no argument(s) {sorted(extra)} (it takes {params})")
    return sig


def compile_kernel(fn: Any, signature: dict[str, str], constexprs: dict[str, Any], target: Any = "sm_90a",
                   num_warps: int = 4, num_stages: int = 3) -> dict[str, str]:
    """Compile a ``@triton.jit`` / ``@gluon.jit`` function on the CPU: ``{"ttgir": ..., "ptx": ...}`` (PTX for NVIDIA
    targets). Triton's stages run as ``triton.compile`` runs them, without a GPU or a driver. A kernel Triton
    refuses is a LayoutError naming the kernel and Triton's message (with its line)."""
    try:
        from triton._C.libtriton import ir
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
        from triton.compiler.compiler import make_backend
    except ImportError as e:
        raise LayoutError(f"compiling a kernel needs Triton (pip install triton): {e}") from None
    backend_name, arch, warp = parse_target(target)
    name = getattr(fn, "__name__", "?")
    try:
        if type(fn).__name__ == "GluonJITFunction":
            from triton.experimental.gluon._runtime import GluonASTSource

            src: Any = GluonASTSource(fn, signature=signature, constexprs=constexprs)
        else:
            src = ASTSource(fn, signature, constexprs)
        gpu = GPUTarget(backend_name, arch, warp)
        backend = make_backend(gpu)
        options = backend.parse_options({"num_warps": num_warps, "num_stages": num_stages})
        stages: dict = {}
        backend.add_stages(stages, options, src.language)
        ctx = ir.context()
        ir.load_dialects(ctx)
        backend.load_dialects(ctx)
        module = src.make_ir(gpu, options, backend.get_codegen_implementation(options), backend.get_module_map(), ctx)
        metadata = {"hash": hashlib.sha256(repr((name, arch, num_warps, num_stages)).encode()).hexdigest(),
                    "target": gpu, **options.__dict__}
        upto = "ptx" if backend_name == "cuda" else "ttgir"
        out: dict[str, str] = {}
        for ext, step in list(stages.items())[list(stages).index(src.ext):]:
            module = step(module, metadata)
            out[ext] = module if isinstance(module, str) else str(module)
            if ext == upto:
                break
        return out
    except LayoutError:
        raise
    except Exception as e:  # noqa: BLE001 - Triton's refusal, reported with its own words and line
        msg = str(e).strip() or type(e).__name__
        lines = [x for x in msg.splitlines() if x.strip()]
        where = next((re.match(r"at (\d+):(\d+)", x.strip()) for x in lines if re.match(r"at \d+:\d+", x.strip())), None)
        head = lines[-1] if lines else msg
        at = ""
        if where is not None:
            at = f" (line {int(where[1])}, column {int(where[2])} of the kernel)"
            file_line = _file_line(fn, int(where[1]))
            if file_line is not None:
                at = f" ({file_line[0]}, line {file_line[1]}, column {int(where[2])})"
        raise LayoutError(f"kernel {name} does not compile for {target}: {head[:400]}{at}") from None


def _file_line(fn: Any, n: int) -> tuple[str, int] | None:
    """(file, line) of line ``n`` of a jitted kernel's source (line 1: its ``def``)."""
    import inspect

    try:
        lines, start = inspect.getsourcelines(fn.fn)
        path = inspect.getsourcefile(fn.fn) or "?"
    except (OSError, TypeError, AttributeError):
        return None
    first = next((i for i, x in enumerate(lines) if x.lstrip().startswith("def ")), 0)
    return os.path.basename(path), start + first + n - 1


@dataclass
class PythonInspection:
    """What :func:`inspect_python` returns: the configuration compiled, the ttgir and PTX, the report and
    the PTX's descriptor checks."""

    path: str
    config: InspectConfig
    ttgir: str
    ptx: str | None
    report: KernelReport
    checks: list = field(default_factory=list)


def inspect_python(path: str, kernel: str | None = None, signature: dict[str, str] | None = None,
                   constexprs: dict[str, Any] | None = None, target: Any = None, num_warps: int | None = None,
                   num_stages: int | None = None) -> PythonInspection:
    """Import ``path`` (this runs the file), compile its kernel on the CPU and inspect it. Arguments given here
    override the file's ``LAYOUTALG_INSPECT`` dictionary."""
    from .ptx import check_ptx

    mod = load_python(path)
    base = _config_from(getattr(mod, "LAYOUTALG_INSPECT", {}), path)
    if kernel is not None and base.kernel is not None and kernel != base.kernel:  # the file's arguments are another kernel's
        base = InspectConfig(None, {}, {}, base.target, base.num_warps, base.num_stages)
    cfg = base.merged(kernel=kernel, signature=signature, constexprs=constexprs, target=target, num_warps=num_warps,
                      num_stages=num_stages)
    kernels = _kernels(mod)
    if not kernels:
        raise LayoutError(f"{path}: no @triton.jit or @gluon.jit kernel in the file")
    if cfg.kernel is None:
        if len(kernels) > 1:
            raise LayoutError(f"{path}: several kernels ({', '.join(sorted(kernels))}): name one with --kernel "
                              "or LAYOUTALG_INSPECT['kernel']")
        cfg.kernel = next(iter(kernels))
    if cfg.kernel not in kernels:
        raise LayoutError(f"{path}: no kernel {cfg.kernel!r} (kernels: {', '.join(sorted(kernels))})")
    fn = kernels[cfg.kernel]
    sig = _signature(fn, cfg, path)
    consts = dict(cfg.constexprs)
    if "num_warps" in sig and "num_warps" not in consts:
        consts["num_warps"] = cfg.num_warps
    asm = compile_kernel(fn, sig, consts, cfg.target, cfg.num_warps, cfg.num_stages)
    report = inspect_ttgir(asm["ttgir"])
    ptx = asm.get("ptx")
    checks = check_ptx(asm["ttgir"], ptx) if ptx else []
    return PythonInspection(path, cfg, asm["ttgir"], ptx, report, checks)
