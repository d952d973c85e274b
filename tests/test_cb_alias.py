"""CB aliases: several CB indices over one L1 allocation (ttnn's CBDescriptor with several format
descriptors), as tt-metal's matmul factories lay the partials CB over the output CB. On the device the
indices share bytes but keep their own pointers and page counts; the simulator must do the same."""

from __future__ import annotations

import numpy as np
import pytest

from simkit import TEST_KERNELS
from ttprefill.device.program import (
    CBAlias,
    CBView,
    CircularBuffer,
    CoreCoord,
    CoreRangeSet,
    DataFormat,
    Kernel,
    L1_RESERVED_BYTES,
    Program,
    ProgramError,
    Role,
)

CORE = CoreCoord(0, 0)
CORES = CoreRangeSet.of([CORE])
PUSHED, ALIAS = 0, 7


def relay_program(src, dst, alias_shares_memory: bool) -> Program:
    """dfb_reader pushes every page of `src` on c_0; alias_drain takes them through c_7 to `dst`."""
    n, fmt, page = src.num_pages, src.data_format, src.page_size
    if alias_shares_memory:
        cbs = [CircularBuffer(PUSHED, fmt, page, n, CORES, aliases=(CBAlias(ALIAS, fmt, page),))]
    else:
        cbs = [CircularBuffer(PUSHED, fmt, page, n, CORES), CircularBuffer(ALIAS, fmt, page, n, CORES)]
    kernels = [
        Kernel(TEST_KERNELS / "dfb_reader.cpp", Role.RISCV_1, CORES, src.accessor_args(),
               named_compile_time_args={"cb_in": PUSHED}, runtime_args={CORE: [src.address, 0, n]}),
        Kernel(TEST_KERNELS / "alias_drain.cpp", Role.RISCV_0, CORES, [PUSHED, ALIAS, *dst.accessor_args()],
               runtime_args={CORE: [dst.address, n]}),
    ]
    return Program(kernels=kernels, circular_buffers=cbs, name="cb_alias_relay")


@pytest.mark.parametrize("shared", [True, False], ids=["alias", "separate_allocation"])
def test_alias_reads_the_bytes_pushed_on_the_other_index(sim, shared):
    x = np.random.default_rng(5).standard_normal((64, 96)).astype(np.float32)
    src = sim.upload(x, DataFormat.Float16_b)
    dst = sim.allocate(x.shape, DataFormat.Float16_b)
    try:
        sim.run(relay_program(src, dst, alias_shares_memory=shared))
        got, sent = sim.download(dst), sim.download(src)
        if shared:
            np.testing.assert_array_equal(got, sent)
        else:
            # The control: c_7 in its own L1 was never written, and the run starts L1 zeroed.
            assert not np.any(got)
    finally:
        sim.free(src)
        sim.free(dst)


def test_alias_sees_the_allocation_in_its_own_pages():
    cb = CircularBuffer(4, DataFormat.Float16_b, 2048, 6, CORES,
                        aliases=(CBAlias(5, DataFormat.Float32, 4096), CBAlias(6, DataFormat.Bfp8_b, 1088 * 2)))
    with pytest.raises(ProgramError, match="page of 2176 B does not divide"):
        Program([], [cb]).validate()  # checked whether or not a kernel runs there
    cb = CircularBuffer(4, DataFormat.Float16_b, 2048, 6, CORES, aliases=(CBAlias(5, DataFormat.Float32, 4096),))
    assert cb.views() == [CBView(4, DataFormat.Float16_b, 2048, 6), CBView(5, DataFormat.Float32, 4096, 3)]


def test_alias_takes_no_l1_and_its_index_must_be_free(sim):
    x = np.zeros((32, 64), np.float32)
    src = sim.upload(x, DataFormat.Float16_b)
    dst = sim.allocate(x.shape, DataFormat.Float16_b)
    try:
        program = relay_program(src, dst, alias_shares_memory=True)
        assert program.l1_bytes_on(CORE) == L1_RESERVED_BYTES + 2 * 2048
        program.circular_buffers.append(CircularBuffer(ALIAS, DataFormat.Float16_b, 2048, 1, CORES))
        with pytest.raises(ProgramError, match=f"circular buffer {ALIAS} defined twice"):
            program.validate()
    finally:
        sim.free(src)
        sim.free(dst)
