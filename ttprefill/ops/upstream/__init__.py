"""Programs that run tt-metal's own kernels, unmodified, as the pinned ttnn wheel ships them.

Each module mirrors one upstream program factory: the same circular buffers, compile-time args,
defines, runtime args and core ranges that tt-metal sets up for the op, around kernel sources read
from the installed ttnn 0.81.1 package at run time (nothing of them is copied into this repository).
They are the simulator's conformance suite (tests/upstream) and the peers our kernels are measured
against.
"""

from __future__ import annotations

from pathlib import Path

from ttprefill.device import ttnn_env

# Upstream kernel paths below are relative to this folder of the package.
OPERATIONS = Path("ttnn") / "cpp" / "ttnn" / "operations"


class UpstreamKernelsMissing(FileNotFoundError):
    """The pinned ttnn wheel (which carries tt-metal's kernels) is not installed where we look."""


def kernel_path(relative: str | Path) -> Path:
    """The path of an upstream kernel source, relative to ttnn/cpp/ttnn/operations in the wheel.

    Example: kernel_path("eltwise/unary/device/kernels/compute/eltwise_sfpu.cpp").
    """
    try:
        root = ttnn_env.package_root()
    except FileNotFoundError as e:
        raise UpstreamKernelsMissing(
            f"tt-metal's kernels come from the pinned ttnn=={ttnn_env.PINNED_TTNN_VERSION} wheel, which was not found: {e}"
        ) from e
    path = root / OPERATIONS / relative
    if not path.is_file():
        raise UpstreamKernelsMissing(f"{path} is not in the installed ttnn wheel (was the kernel renamed upstream?)")
    return path
