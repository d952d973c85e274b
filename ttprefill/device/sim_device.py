"""SimDevice: runs a Program on the simulator built from sim/ (module ttprefill._sim)."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from loguru import logger

from . import formats, jit
from .program import (
    DRAM_BANKS,
    GRID_X,
    GRID_Y,
    L1_RESERVED_BYTES,
    cb_aligned,
    CoreCoord,
    DataFormat,
    Program,
    Role,
)
from .executor import TO_DEVICE, TO_HOST, Capabilities, HostTraffic, RunReport
from .tensor import DeviceTensor

_ROLE_CODES = {Role.RISCV_0: 0, Role.RISCV_1: 1, Role.COMPUTE: 2}
# The timing model's cost settings (sim/src/timing.h, CostSetting): the costs no Wormhole measurement pins
# down taken at the low end of their ranges, the central value or the high end (docs/TIMING.md).
COST_SETTINGS = {"low": 0, "central": 1, "high": 2}
DEFAULT_COST_SETTING = "central"


class SimError(RuntimeError):
    """The simulator stopped a program: deadlock, L1 overflow, DST misuse, bad access, bad argument."""


def _import_sim():
    try:
        from ttprefill import _sim
    except ImportError as e:  # pragma: no cover - exercised only on a broken install
        raise ImportError(
            "the simulator extension ttprefill._sim is not built; run `pip install -e .` (scripts/test does this)"
        ) from e
    return _sim


def model_costs(setting: str = DEFAULT_COST_SETTING) -> dict:
    """The uncertain costs at one setting (timing.h), for reports and for tests of the model's arithmetic."""
    return dict(_import_sim().timing_costs(COST_SETTINGS[setting]))


def model_version() -> str:
    """The timing model's version (sim/src/timing.h): what every modeled figure was computed with."""
    return _import_sim().timing_model_version


class SimDevice:
    """The simulated Wormhole chip: 8x8 Tensix cores, 12 DRAM banks."""

    grid = (GRID_X, GRID_Y)
    capabilities = Capabilities(models_time=True, holds_data=True, has_mesh=False)

    def __init__(self, timing_only: bool = False, trace: bool = False, costs: str = DEFAULT_COST_SETTING):
        self._sim = _import_sim()
        if costs not in COST_SETTINGS:
            raise ValueError(f"unknown cost setting {costs!r}; choose one of {', '.join(COST_SETTINGS)}")
        self._device = self._sim.Device()
        self.timing_only = timing_only
        self.trace = trace
        self.costs = costs
        self.last_report: RunReport | None = None
        self.host_traffic = HostTraffic()
        # Fault guards (docs/faults.md): stop a run after this many modeled cycles or seconds of simulator
        # CPU time without CB, NoC or semaphore traffic; a kernel running spin_seconds of CPU time without
        # an API call is taken to poll L1 and yields until its core's L1 is written.
        self.watchdog = {"watchdog_cycles": 4_000_000_000, "watchdog_seconds": 120.0, "spin_seconds": 0.01}
        # Addresses of the tensors the host has written since they were allocated. In a timing-only run
        # kernels' DRAM writes are dropped (sim/src/scheduler.cpp), so every other tensor reads as zeros:
        # zeros need neither host memory to upload nor to download (a 32k-token layer stays small).
        self._host_written: set[int] = set()
        # Bytes of the live tensors (their pages, the allocator's per-bank rounding aside) and their highest
        # value since reset_tensor_bytes_high_water: what a memory plan's working set is checked against.
        self._tensor_bytes = self._tensor_bytes_high_water = 0

    # ------------------------------------------------------------------ tensors
    def allocate(self, shape: tuple[int, ...], data_format: DataFormat) -> DeviceTensor:
        shape = tuple(int(s) for s in shape)
        if len(shape) < 2 or any(s <= 0 for s in shape):
            raise ValueError(f"device tensors need at least 2 positive dims, got {shape}")
        t = DeviceTensor(shape, DataFormat(data_format), 0, self)
        per_bank = -(-t.num_pages // DRAM_BANKS) * t.aligned_page_size
        # The page count lets the simulator refuse kernel reads of a bank's padding past the last page.
        t.address = self._device.dram_alloc(per_bank, t.num_pages, t.aligned_page_size)
        self._host_written.discard(t.address)
        self._tensor_bytes += t.nbytes
        self._tensor_bytes_high_water = max(self._tensor_bytes_high_water, self._tensor_bytes)
        return t

    def upload(self, array: np.ndarray, data_format: DataFormat) -> DeviceTensor:
        array = np.asarray(array)
        t = self.allocate(array.shape, data_format)
        self.write(t, array)
        return t

    def write(self, tensor: DeviceTensor, array: np.ndarray) -> None:
        self._check_live(tensor)
        if tuple(array.shape) != tensor.shape:
            raise ValueError(f"cannot write an array of shape {array.shape} into a tensor of shape {tensor.shape}")
        if self._reads_as_zeros(tensor) and not np.any(array):
            return  # writing zeros over zeros
        data = formats.to_device_bytes(array, tensor.data_format)
        self.write_pages(tensor, 0, data)

    def write_pages(self, tensor: DeviceTensor, first_page: int, data: np.ndarray) -> None:
        self._check_live(tensor)
        n = len(data) // tensor.page_size
        if first_page < 0 or first_page + n > tensor.num_pages:
            raise ValueError(f"pages [{first_page}, {first_page + n}) outside the tensor's {tensor.num_pages} pages")
        self._device.dram_write_pages(tensor.address, tensor.aligned_page_size, first_page, np.asarray(data, np.uint8),
                                      tensor.page_size)
        self._host_written.add(tensor.address)
        self.host_traffic.add(TO_DEVICE, "write", n * tensor.page_size)

    def read_pages(self, tensor: DeviceTensor, first_page: int, num_pages: int) -> np.ndarray:
        self._check_live(tensor)
        if first_page < 0 or first_page + num_pages > tensor.num_pages:
            raise ValueError(f"pages [{first_page}, {first_page + num_pages}) outside the tensor's {tensor.num_pages} pages")
        self.host_traffic.add(TO_HOST, "read", num_pages * tensor.page_size)
        return self._device.dram_read_pages(tensor.address, tensor.aligned_page_size, first_page, num_pages,
                                            tensor.page_size)

    def download(self, tensor: DeviceTensor) -> np.ndarray:
        if self._reads_as_zeros(tensor):
            self._check_live(tensor)
            # np.zeros maps the OS's zero pages lazily: no host memory until someone writes the array.
            dtype = {DataFormat.UInt32: np.uint32, DataFormat.Int32: np.int32}.get(tensor.data_format, np.float32)
            return np.zeros(tensor.shape, dtype)
        data = self.read_pages(tensor, 0, tensor.num_pages)
        return formats.from_device_bytes(data, tensor.data_format, tensor.shape)

    def free(self, tensor: DeviceTensor) -> None:
        self._check_live(tensor)
        self._device.dram_free(tensor.address)
        self._host_written.discard(tensor.address)
        self._tensor_bytes -= tensor.nbytes
        tensor.freed = True

    def _reads_as_zeros(self, tensor: DeviceTensor) -> bool:
        """Timing-only, and nothing but zeros can be in the tensor: the host never wrote it and kernels'
        DRAM writes are dropped."""
        return self.timing_only and tensor.address not in self._host_written

    def dram_bytes_in_use(self) -> int:
        return self._device.dram_bytes_in_use()

    def tensor_bytes_in_use(self) -> int:
        """The live tensors' bytes (pages times page size), without the allocator's per-bank rounding."""
        return self._tensor_bytes

    def tensor_bytes_high_water(self) -> int:
        """The most tensor_bytes_in_use has been since the last reset_tensor_bytes_high_water."""
        return self._tensor_bytes_high_water

    def reset_tensor_bytes_high_water(self) -> None:
        self._tensor_bytes_high_water = self._tensor_bytes

    def _check_live(self, tensor: DeviceTensor) -> None:
        if tensor.device is not self:
            raise ValueError("tensor belongs to another device")
        if tensor.freed:
            raise ValueError("tensor was freed")

    # ------------------------------------------------------------------ programs
    def worker_noc_coord(self, core: CoreCoord) -> tuple[int, int]:
        """NoC coordinates of a logical core, for kernels that address other cores (multicast)."""
        return (core.x, core.y)

    def run(self, program: Program) -> RunReport:
        program.validate()
        t0 = time.perf_counter()
        before = (jit.STATS.compiled, jit.STATS.cached)
        kernels = program.kernels
        # Independent kernels compile in parallel (g++ runs outside the GIL).
        with ThreadPoolExecutor(max_workers=2) as pool:
            so_paths = list(pool.map(lambda k: jit.build(k, program.circular_buffers), kernels))
        spec = {
            "name": program.name,
            "timing_only": self.timing_only,
            "trace": self.trace,
            "cost_setting": COST_SETTINGS[self.costs],
            "l1_reserved": L1_RESERVED_BYTES,
            **self.watchdog,
            "kernels": [self._kernel_spec(k, so) for k, so in zip(kernels, so_paths)],
            "cbs": self._cb_specs(program),
            "semaphores": [
                {"core": (c.x, c.y), "id": s.id, "initial": s.initial_value}
                for s in program.semaphores for c in s.cores.cores()
            ],
        }
        try:
            result = self._device.run(spec)
        except self._sim.SimError as e:
            raise SimError(str(e)) from None
        wall = time.perf_counter() - t0
        report = RunReport(program.name, wall, result["cycles"], result["cores"], result["counters"],
                           jit.STATS.compiled - before[0], jit.STATS.cached - before[1], trace=result["trace"],
                           zones=result["zones"])
        logger.debug("{}: {} modeled cycles, {:.3f} s wall", program.name, report.cycles, wall)
        self.last_report = report
        return report

    @staticmethod
    def _kernel_spec(k, so_path) -> dict:
        cfg = k.compute_config
        return {
            "so_path": str(so_path),
            "name": k.name,
            "role": _ROLE_CODES[k.role],
            "noc": k.noc_index,
            "cores": [(c.x, c.y) for c in k.cores.cores()],
            "runtime_args": {(c.x, c.y): [int(a) & 0xFFFFFFFF for a in args] for c, args in k.runtime_args.items()},
            "common_args": [int(a) & 0xFFFFFFFF for a in k.bound_common_runtime_args()],
            "fidelity": int(cfg.math_fidelity) if cfg else 4,
            "fp32_dest": bool(cfg.fp32_dest_acc_en) if cfg else False,
            "approx": bool(cfg.math_approx_mode) if cfg else False,
            "unpack_to_dest_fp32": sum(1 << cb for cb in cfg.unpack_to_dest_fp32) if cfg else 0,
        }

    @staticmethod
    def _cb_specs(program: Program) -> list[dict]:
        out = []
        for core in program.all_cores():
            offset = L1_RESERVED_BYTES
            for cb in sorted(program.circular_buffers_on(core), key=lambda c: c.index):
                # An alias is one more CB index over the same bytes: same offset, its own pointers.
                for v in cb.views():
                    out.append({"core": (core.x, core.y), "index": v.index, "format": int(v.data_format),
                                "page_size": v.page_size, "num_pages": v.num_pages, "l1_offset": offset})
                offset += cb_aligned(cb.total_size)
        return out
