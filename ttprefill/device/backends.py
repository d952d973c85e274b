"""Pick an executor by name: "sim" (the simulator built from sim/) or "tt" (a Wormhole card via ttnn).

Both return an object with the same surface (allocate/upload/write/download/free, run, ...);
each is imported only when asked for, so choosing "sim" never imports ttnn and choosing "tt"
never needs the simulator's C++ extension.
"""

from __future__ import annotations

BACKENDS = ("sim", "tt")


def open_device(backend: str, **options):
    """A device of the named backend; options go to its constructor (e.g. mesh_shape=(1, 2) for "tt")."""
    if backend == "sim":
        from .sim_device import SimDevice

        return SimDevice(**options)
    if backend == "tt":
        from .tt_device import TTDevice

        return TTDevice(**options)
    raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
