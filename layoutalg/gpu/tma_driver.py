"""The few CUDA driver calls the TMA check needs, through ``ctypes`` (``libcuda.so.1``: no CuPy or cuda-python).

:class:`Driver` encodes tensor maps (``cuTensorMapEncodeTiled``), allocates, copies, loads cubins and
launches one CTA; :func:`map_arg` passes an encoded map as a kernel argument; :func:`bindings_encode`
cross-checks the encode through ``cuda.bindings`` where that is importable. Tests stand a simulated driver
with the same methods in its place.
"""

from __future__ import annotations

import ctypes

import numpy as np

__all__ = ["Driver", "map_arg", "bindings_encode"]


class Driver:
    """The few CUDA driver calls the harness needs (libcuda.so.1 via ctypes; one primary context)."""

    def __init__(self) -> None:
        self.lib = ctypes.CDLL("libcuda.so.1")
        self._check(self.lib.cuInit(0), "cuInit")
        dev = ctypes.c_int()
        self._check(self.lib.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
        self.ctx = ctypes.c_void_p()
        self._check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(self.ctx), dev), "cuDevicePrimaryCtxRetain")
        self._check(self.lib.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")
        self.modules: dict = {}
        ver = ctypes.c_int()
        self.lib.cuDriverGetVersion(ctypes.byref(ver))
        self.version = ver.value

    def error_name(self, code: int) -> str:
        p = ctypes.c_char_p()
        self.lib.cuGetErrorName(int(code), ctypes.byref(p))
        return (p.value or b"?").decode()

    def _check(self, r: int, what: str) -> None:
        if r:
            raise RuntimeError(f"{what} failed: CUresult {r} ({self.error_name(r) if hasattr(self, 'lib') else ''})")

    def encode_tiled(self, args: dict) -> tuple[int, bytes]:
        """cuTensorMapEncodeTiled(args) -> (CUresult, the 128 bytes)."""
        buf = (ctypes.c_uint8 * 192)()
        addr = ctypes.addressof(buf)
        off = (-addr) % 64
        tm = ctypes.c_void_p(addr + off)
        n = args["tensorRank"]
        gdim = (ctypes.c_uint64 * max(n, 1))(*args["globalDim"])
        gstr = (ctypes.c_uint64 * max(n, 1))(*args["globalStrides"])
        box = (ctypes.c_uint32 * max(n, 1))(*args["boxDim"])
        es = (ctypes.c_uint32 * max(n, 1))(*args["elementStrides"])
        f = self.lib.cuTensorMapEncodeTiled
        f.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                      ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
        r = f(tm, args["tensorDataType"], n, ctypes.c_void_p(args["globalAddress"]), gdim, gstr, box, es,
              args["interleave"], args["swizzle"], args["l2Promotion"], args["oobFill"])
        return int(r), bytes(buf[off:off + 128])

    def alloc(self, nbytes: int) -> int:
        p = ctypes.c_uint64()
        self._check(self.lib.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(max(nbytes, 16))), "cuMemAlloc")
        return p.value

    def free(self, p: int) -> None:
        self.lib.cuMemFree_v2(ctypes.c_uint64(p))

    def htod(self, p: int, data: bytes) -> None:
        self._check(self.lib.cuMemcpyHtoD_v2(ctypes.c_uint64(p), ctypes.c_char_p(data), ctypes.c_size_t(len(data))), "cuMemcpyHtoD")

    def dtoh(self, p: int, nbytes: int) -> bytes:
        buf = ctypes.create_string_buffer(nbytes)
        self._check(self.lib.cuMemcpyDtoH_v2(buf, ctypes.c_uint64(p), ctypes.c_size_t(nbytes)), "cuMemcpyDtoH")
        return buf.raw

    def function(self, cubin: str, name: str) -> ctypes.c_void_p:
        if cubin not in self.modules:
            mod = ctypes.c_void_p()
            self._check(self.lib.cuModuleLoad(ctypes.byref(mod), cubin.encode()), "cuModuleLoad")
            self.modules[cubin] = mod
        fn = ctypes.c_void_p()
        self._check(self.lib.cuModuleGetFunction(ctypes.byref(fn), self.modules[cubin], name.encode()), "cuModuleGetFunction")
        self._check(self.lib.cuFuncSetAttribute(fn, 8, 200 * 1024), "cuFuncSetAttribute")  # max dynamic smem
        return fn

    def launch(self, fn: ctypes.c_void_p, args: list, smem: int) -> None:
        """args: list of ctypes values (a 128-byte map is a ctypes array); one CTA of 128 threads."""
        holders = [(ctypes.c_void_p * 1)(ctypes.addressof(a)) for a in args]
        params = (ctypes.c_void_p * len(args))(*[h[0] for h in holders])
        self._check(self.lib.cuLaunchKernel(fn, 1, 1, 1, 128, 1, 1, smem, None, params, None), "cuLaunchKernel")
        self._check(self.lib.cuCtxSynchronize(), "cuCtxSynchronize (kernel)")


def map_arg(blob: bytes) -> ctypes.Array:
    """An encoded tensor map (128 bytes) as a ctypes array, passed by value to a kernel."""
    a = (ctypes.c_uint8 * 128)()
    ctypes.memmove(a, blob, 128)
    return a


def bindings_encode(args: dict) -> tuple[int, bytes] | None:
    """The same encode through cuda.bindings, if importable (a cross-check of the ctypes path)."""
    try:
        from cuda.bindings import driver as cbd
    except Exception:  # noqa: BLE001
        return None
    try:
        u64, u32 = cbd.cuuint64_t, cbd.cuuint32_t
        r, tm = cbd.cuTensorMapEncodeTiled(
            cbd.CUtensorMapDataType(args["tensorDataType"]), args["tensorRank"], args["globalAddress"],
            [u64(x) for x in args["globalDim"]], [u64(x) for x in args["globalStrides"]], [u32(x) for x in args["boxDim"]],
            [u32(x) for x in args["elementStrides"]], cbd.CUtensorMapInterleave(args["interleave"]),
            cbd.CUtensorMapSwizzle(args["swizzle"]), cbd.CUtensorMapL2promotion(args["l2Promotion"]),
            cbd.CUtensorMapFloatOOBfill(args["oobFill"]))
        raw = b""
        if int(r) == 0:
            op = tm.opaque
            raw = np.array([int(x) for x in op], dtype=np.uint64).tobytes() if not isinstance(op, (bytes, bytearray)) else bytes(op)
        return int(r), raw
    except Exception as e:  # noqa: BLE001 - an enum the bindings refuse to build, say
        return -1, repr(e).encode()[:200]
