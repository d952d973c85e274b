"""The executor backends by name, with what each can do. Each is imported only when opened, so choosing
"sim" never imports ttnn and choosing "tt" never needs the simulator's C++ extension.

A new backend (a mesh, another simulator) adds one Backend entry here and a class implementing
device/executor.py's Executor protocol.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Backend:
    name: str
    module: str  # where its executor class lives
    class_name: str
    models_time: bool  # its RunReports carry modeled cycles
    mesh: bool  # it can open a mesh of chips (mesh_shape=...)
    description: str
    # The executor opened when mesh_shape is given, if another class than the one-chip executor's.
    mesh_module: str | None = None
    mesh_class_name: str | None = None


BACKENDS: dict[str, Backend] = {
    "sim": Backend("sim", "ttprefill.device.sim_device", "SimDevice", models_time=True, mesh=True,
                   description="the simulator built from sim/ (one Wormhole chip, or with mesh_shape a mesh of "
                               "them joined by modeled Ethernet; modeled time)",
                   mesh_module="ttprefill.device.mesh", mesh_class_name="SimMesh"),
    "tt": Backend("tt", "ttprefill.device.tt_device", "TTDevice", models_time=False, mesh=True,
                  description="a Wormhole card through ttnn (n150; with mesh_shape an n300 as 1x2 or a T3000 as "
                              "2x4 / 1x8, the model split over its chips), wall time"),
}


def backend_info(name: str) -> Backend:
    try:
        return BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}") from None


def open_device(backend: str, **options):
    """An executor of the named backend; options go to its constructor (e.g. mesh_shape=(1, 2): "sim" then
    opens a SimMesh of simulated chips, "tt" a ttnn mesh)."""
    info = backend_info(backend)
    if "mesh_shape" in options and not info.mesh:
        raise ValueError(f"backend {backend!r} runs one chip; drop mesh_shape or use a backend with a mesh")
    if "mesh_shape" in options and info.mesh_class_name:
        return getattr(importlib.import_module(info.mesh_module), info.mesh_class_name)(**options)
    return getattr(importlib.import_module(info.module), info.class_name)(**options)


def close_device(device) -> None:
    """Closes an executor that holds a device open (TTDevice: the card's mesh, then its fabric configuration);
    the simulator's executors hold nothing open. None (no device) is fine."""
    close = getattr(device, "close", None)
    if close is not None:
        close()
