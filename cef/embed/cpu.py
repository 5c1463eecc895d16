"""What the CPU offers the local encoder: which precision runs fastest here, decided without loading a model.

bfloat16 pays off only on CPUs with AMX (Advanced Matrix Extensions, flag
``amx_bf16``): there oneDNN runs the encoder's matrix products on the tile
units, about three times as many passages per second as float32. On a CPU
with AVX-512 BF16 but no AMX the same bfloat16 model is *slower* than float32
(measured: 43 against 67 passages/s on two Xeon cores whose hypervisor hides
AMX), so ``auto`` keeps float32 there.

The flags are read from ``/proc/cpuinfo`` (Linux); where that file does not
exist the CPU is taken to offer nothing special, and float32 runs.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

__all__ = ["AMX_FLAGS", "Precision", "auto_precision", "cpu_flags", "describe_cpu"]

Precision = Literal["float32", "bfloat16"]
#: the flags a CPU reports when its AMX tile units can multiply bfloat16 (and the kernel lets programs use them)
AMX_FLAGS = frozenset({"amx_bf16", "amx_tile"})
_CPUINFO = Path("/proc/cpuinfo")


@functools.cache
def cpu_flags() -> frozenset[str]:
    """The feature flags of the first CPU in ``/proc/cpuinfo`` (empty where there is no such file)."""
    try:
        text = _CPUINFO.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def _torch_installed() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("torch", "sentence_transformers"))


def auto_precision(flags: Iterable[str] | None = None, *, torch_installed: bool | None = None) -> Precision:
    """``bfloat16`` when the CPU has AMX-BF16 and torch is installed (it runs the bfloat16 model), else ``float32``."""
    have = frozenset(cpu_flags() if flags is None else flags)
    torch_ok = _torch_installed() if torch_installed is None else torch_installed
    return "bfloat16" if have >= AMX_FLAGS and torch_ok else "float32"


def describe_cpu(flags: Iterable[str] | None = None) -> str:
    """Why ``auto`` chose what it did, in a few words (shown by ``cef config``)."""
    have = frozenset(cpu_flags() if flags is None else flags)
    if have >= AMX_FLAGS:
        return "CPU has AMX-BF16" + ("" if _torch_installed() else ", but torch is not installed")
    if "avx512_bf16" in have:
        return "CPU has AVX-512 BF16 but no AMX: float32 is faster here"
    return "CPU has no AMX-BF16"
