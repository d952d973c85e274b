"""Tensors kept on a device by name: uploaded once, reused by every run that reads them, freed when
released. What a caller keeps resident (weights, K/V caches, recurrent states) crosses to the device
once, and the executor's HostTraffic shows it."""

from __future__ import annotations

import numpy as np

from .program import DataFormat
from .tensor import DeviceTensor


class ResidentTensors:
    def __init__(self, device) -> None:
        self.device = device
        self._held: dict[str, DeviceTensor] = {}

    def __contains__(self, name: str) -> bool:
        return name in self._held

    def __getitem__(self, name: str) -> DeviceTensor:
        try:
            return self._held[name]
        except KeyError:
            raise KeyError(f"no resident tensor {name!r}; upload it first with ResidentTensors.upload") from None

    def upload(self, name: str, array: np.ndarray, data_format: DataFormat) -> DeviceTensor:
        """The tensor held under `name`, uploaded now if it is not held yet (the array is then not read)."""
        held = self._held.get(name)
        if held is not None:
            if tuple(np.shape(array)) != held.shape or DataFormat(data_format) != held.data_format:
                raise ValueError(f"resident tensor {name!r} is {held.shape} {held.data_format.name}; got "
                                 f"{tuple(np.shape(array))} {DataFormat(data_format).name}: release it first")
            return held
        self._held[name] = self.device.upload(array, data_format)
        return self._held[name]

    def release(self, name: str) -> None:
        self.device.free(self._held.pop(name))

    def release_all(self) -> None:
        for name in list(self._held):
            self.release(name)

    @property
    def nbytes(self) -> int:
        return sum(t.nbytes for t in self._held.values())
