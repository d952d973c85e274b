"""OfflineDevice: tensor layout without a device, for building Programs nobody will run here.

It gives DeviceTensors the same page layout and the same kind of DRAM addresses as SimDevice
(interleaved over 12 banks, each bank's allocations bumped upward), but keeps no data. Program
builders need tensors for their addresses and TensorAccessorArgs; the checks against the real ttnn
(tests/host, in .venv-tt where the simulator extension is not built) get them from here.
"""

from __future__ import annotations

from .executor import Capabilities, HostTraffic
from .program import DRAM_ALIGNMENT, DRAM_BANKS, GRID_X, GRID_Y, CoreCoord, DataFormat
from .tensor import DeviceTensor

# Where per-bank allocations start: above the first DRAM pages, as a real allocator leaves them.
FIRST_ADDRESS = 0x10000


class OfflineDevice:
    grid = (GRID_X, GRID_Y)
    capabilities = Capabilities(models_time=False, holds_data=False, has_mesh=False)

    def __init__(self) -> None:
        self._next_address = FIRST_ADDRESS
        self.host_traffic = HostTraffic()  # stays empty: nothing moves

    def allocate(self, shape: tuple[int, ...], data_format: DataFormat) -> DeviceTensor:
        shape = tuple(int(s) for s in shape)
        if len(shape) < 2 or any(s <= 0 for s in shape):
            raise ValueError(f"device tensors need at least 2 positive dims, got {shape}")
        t = DeviceTensor(shape, DataFormat(data_format), self._next_address, self)
        per_bank = -(-t.num_pages // DRAM_BANKS) * t.aligned_page_size
        self._next_address += -(-per_bank // DRAM_ALIGNMENT) * DRAM_ALIGNMENT
        return t

    def upload(self, array, data_format: DataFormat) -> DeviceTensor:
        """Allocates only: the data is dropped (nothing will run)."""
        return self.allocate(tuple(array.shape), data_format)

    def free(self, tensor: DeviceTensor) -> None:
        tensor.freed = True

    def worker_noc_coord(self, core: CoreCoord) -> tuple[int, int]:
        # Same answer as SimDevice; a real card's NoC coordinates differ (TTDevice asks ttnn).
        return (core.x, core.y)

    def write(self, tensor, array) -> None:
        raise RuntimeError("OfflineDevice holds no data; use SimDevice or TTDevice to run programs")

    download = read_pages = write_pages = run = write
