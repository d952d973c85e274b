"""TTDevice: fails at once without a card; on a card (tests marked hardware) it runs a program."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from ttprefill.device import tt_device
from ttprefill.device.backends import open_device
from ttprefill.device.program import DataFormat
from ttprefill.device.tt_device import TTDevice, TTDeviceUnavailable


def test_without_a_card_tt_device_fails_at_once(monkeypatch, tmp_path):
    monkeypatch.setattr(tt_device, "DEVICE_NODES", tmp_path / "no-such-dir")
    with pytest.raises(TTDeviceUnavailable, match="no Tenstorrent card found"):
        TTDevice()
    with pytest.raises(TTDeviceUnavailable, match="--backend sim"):
        open_device("tt")


def test_an_empty_driver_directory_is_no_card(monkeypatch, tmp_path):
    monkeypatch.setattr(tt_device, "DEVICE_NODES", tmp_path)
    assert not tt_device.card_present()
    (tmp_path / "0").touch()
    assert tt_device.card_present()


def _bf16(values: np.ndarray) -> np.ndarray:
    """Round float32 to bfloat16 (nearest, ties to even), written here from the format's definition."""
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return rounded.astype(np.uint32).view(np.float32)


@pytest.mark.hardware
def test_copy_program_runs_on_the_card():
    from host_programs import copy_program
    from ttprefill.device.program import CoreRangeSet

    rng = np.random.default_rng(0)
    with TTDevice() as device:
        tiles = 8
        data = rng.standard_normal((tiles * 32, 32)).astype(np.float32)
        src = device.upload(data, DataFormat.Float16_b)
        dst = device.allocate(data.shape, DataFormat.Float16_b)
        program = copy_program(1, 1, tiles)
        cores = CoreRangeSet.grid(1, 1)
        core = cores.cores()[0]
        reader, writer, _compute = program.kernels
        reader.compile_time_args = src.accessor_args() + src.accessor_args()
        reader.runtime_args = {core: [src.address, 0, 0, tiles, 1, 0]}
        writer.compile_time_args = dst.accessor_args()
        writer.runtime_args = {core: [dst.address, 0, tiles]}
        program.inputs, program.outputs = {"src": src}, {"dst": dst}
        device.run(program)
        np.testing.assert_array_equal(device.download(dst), _bf16(data))


@pytest.mark.hardware
def test_worker_noc_coordinates_come_from_the_card():
    from ttprefill.device.program import CoreCoord

    with TTDevice() as device:
        coords = {device.worker_noc_coord(CoreCoord(x, y)) for x in range(8) for y in range(8)}
        assert len(coords) == 64  # distinct NoC coordinates for the 64 worker cores


class _DeviceOpTensor:
    """Stands in for ttnn.Tensor, whose == is the device op ttnn.eq: it returns a tensor, never a bool."""

    def __eq__(self, other):
        raise RuntimeError("ttnn.eq needs both tensors on a device")

    __hash__ = object.__hash__


def test_io_tensors_dedupes_by_identity_without_calling_tensor_eq():
    from host_programs import copy_program

    device = object.__new__(TTDevice)  # io_tensors needs no mesh
    device._inbound, device._landed = {}, {}  # no transfer in flight on the second command queue
    device._collective_done = {}  # no collective in flight on a collectives' sub-device
    a, b = _DeviceOpTensor(), _DeviceOpTensor()
    program = copy_program(1, 1)
    src = tt_device.TTTensor((32, 32), DataFormat.Float16_b, 0, device, ttnn_tensor=a)
    dst = tt_device.TTTensor((32, 32), DataFormat.Float16_b, 0, device, ttnn_tensor=b)
    # An in-place program names its buffer as input and output: generic_op must get it once.
    program.inputs, program.outputs = {"src": src, "acc": dst}, {"dst": dst}
    held = device.io_tensors(program)
    assert len(held) == 2 and held[0] is a and held[1] is b


def test_io_tensors_of_a_program_updating_one_tensor_pass_it_as_input_and_output():
    """generic_op refuses fewer than two io tensors (one input, one output); a program whose only tensor
    it updates in place (the page table update) gives that tensor as both."""
    from host_programs import copy_program

    device = object.__new__(TTDevice)
    device._inbound, device._landed = {}, {}  # no transfer in flight on the second command queue
    device._collective_done = {}  # no collective in flight on a collectives' sub-device
    a = _DeviceOpTensor()
    program = copy_program(1, 1)
    table = tt_device.TTTensor((32, 32), DataFormat.UInt32, 0, device, ttnn_tensor=a)
    program.inputs, program.outputs = {"page_table": table}, {"page_table": table}
    held = device.io_tensors(program)
    assert len(held) == 2 and held[0] is a and held[1] is a


class _Grid:
    def __init__(self, x, y):
        self.x, self.y = x, y


class _Mesh:
    """A mesh of chips with the given grids; like ttnn's, the mesh's own grid is its first chip's."""

    def __init__(self, grids, first_id=0):
        self.grids, self.first_id, self.closed = grids, first_id, False

    def get_num_devices(self):
        return len(self.grids)

    def get_device_ids(self):
        return [self.first_id + i for i in range(len(self.grids))]

    def compute_with_storage_grid_size(self):
        return _Grid(*self.grids[0])

    def create_submeshes(self, shape):
        return [_Mesh([g], i) for i, g in enumerate(self.grids)]


class _FakeTTNN:
    class FabricConfig:
        DISABLED, FABRIC_1D, FABRIC_1D_RING = "DISABLED", "FABRIC_1D", "FABRIC_1D_RING"

    def __init__(self, grids):
        self.mesh = _Mesh(grids)
        self.fabric: list[str] = []

    def set_fabric_config(self, config):
        self.fabric.append(config)

    def MeshShape(self, *shape):
        return shape

    def GetNumAvailableDevices(self):
        return self.mesh.get_num_devices()

    def open_mesh_device(self, shape, num_command_queues=1):
        if getattr(self, "open_fails", False):
            raise RuntimeError("the fake mesh refuses to open")
        self.command_queues = num_command_queues
        return self.mesh

    def close_mesh_device(self, mesh):
        mesh.closed = True


def test_every_chip_of_a_mesh_must_have_the_full_grid(monkeypatch, tmp_path):
    fake = _FakeTTNN([(8, 8), (8, 7)])
    monkeypatch.setattr(tt_device, "import_ttnn", lambda: fake)
    monkeypatch.setenv(tt_device.MOCK_CLUSTER_ENV, str(tmp_path / "cluster.yaml"))
    with pytest.raises(TTDeviceUnavailable, match=r"chip 1 is 8x7"):
        TTDevice((1, 2))
    assert fake.mesh.closed
    # The fabric collectives need is configured before the mesh opens and disabled when it closes.
    assert fake.fabric == ["FABRIC_1D", "DISABLED"]
    ok = _FakeTTNN([(8, 8), (8, 8)])
    monkeypatch.setattr(tt_device, "import_ttnn", lambda: ok)
    assert TTDevice((1, 2)).chip_grids == [(0, 8, 8), (1, 8, 8)]
    ring = _FakeTTNN([(8, 8), (8, 8)])
    monkeypatch.setattr(tt_device, "import_ttnn", lambda: ring)
    TTDevice((1, 2), topology="ring")
    assert ring.fabric == ["FABRIC_1D_RING"]


def test_a_mesh_that_fails_to_open_or_to_close_leaves_the_fabric_disabled(monkeypatch, tmp_path):
    """ttnn keeps its fabric config across opens: a failed open or a failing sub-device teardown at close must
    not leave it configured, nor the mesh open."""
    monkeypatch.setenv(tt_device.MOCK_CLUSTER_ENV, str(tmp_path / "cluster.yaml"))
    refusing = _FakeTTNN([(8, 8), (8, 8)])
    refusing.open_fails = True
    monkeypatch.setattr(tt_device, "import_ttnn", lambda: refusing)
    with pytest.raises(RuntimeError, match="refuses to open"):
        TTDevice((1, 2))
    assert refusing.fabric == ["FABRIC_1D", "DISABLED"]
    fake = _FakeTTNN([(8, 8), (8, 8)])
    monkeypatch.setattr(tt_device, "import_ttnn", lambda: fake)
    device = TTDevice((1, 2))

    def failing_teardown():
        raise RuntimeError("sub-device teardown failed")

    monkeypatch.setattr(device, "close_sub_devices", failing_teardown)
    with pytest.raises(RuntimeError, match="teardown failed"):
        device.close()
    assert fake.mesh.closed and device.closed and fake.fabric == ["FABRIC_1D", "DISABLED"]
    device.close()  # closed already: nothing to do


def test_a_mesh_opened_without_a_fabric_sets_none_and_refuses_collectives(monkeypatch, tmp_path):
    """Topology "none" (the pipeline split's chips, which run no collective) leaves ttnn's fabric unset; a
    collective is refused with what to open instead, before ttnn is asked for it."""
    monkeypatch.setenv(tt_device.MOCK_CLUSTER_ENV, str(tmp_path / "cluster.yaml"))
    fake = _FakeTTNN([(8, 8), (8, 8)])
    monkeypatch.setattr(tt_device, "import_ttnn", lambda: fake)
    device = TTDevice((1, 2), topology="none")
    for collective in (partial(device.all_gather, None, 0), partial(device.reduce_scatter, None, 0),
                       partial(device.all_reduce, None), partial(device.all_gather_matmul, None, None, None),
                       partial(device.matmul_reduce_scatter, None, None, None)):
        with pytest.raises(ValueError, match="opened without one .*topology 'line' or 'ring'"):
            collective()
    device.close()
    assert fake.fabric == [] and fake.mesh.closed
    with pytest.raises(ValueError, match="unknown topology 'torus'"):
        TTDevice((1, 2), topology="torus")


# ---- stage devices (TTDevice.stage_devices, device/tt_stages.py), on the fake ttnn


class _StageTensor:
    """Stands in for a ttnn DRAM tensor of one bf16 tile."""

    def buffer_address(self):
        return 1 << 20

    def buffer_aligned_page_size(self):
        return 2048

    def buffer_num_pages(self):
        return 1


class _StagesTTNN(_FakeTTNN):
    """The fake ttnn with what allocate needs, recording which meshes it closes, in order."""

    bfloat16 = float32 = bfloat8_b = bfloat4_b = int32 = uint32 = TILE_LAYOUT = DRAM_MEMORY_CONFIG = "fake"

    def __init__(self, grids):
        super().__init__(grids)
        self.closed_meshes: list = []
        self.submeshes: list = []
        parent_create = self.mesh.create_submeshes

        def create_submeshes(shape):
            subs = parent_create(shape)
            self.submeshes += subs
            return subs

        self.mesh.create_submeshes = create_submeshes

    def close_mesh_device(self, mesh):
        super().close_mesh_device(mesh)
        self.closed_meshes.append(mesh)

    def Shape(self, shape):
        return shape

    def allocate_tensor_on_device(self, *args):
        return _StageTensor()


def _fake_card(monkeypatch, tmp_path, grids):
    fake = _StagesTTNN(grids)
    monkeypatch.setattr(tt_device, "import_ttnn", lambda: fake)
    monkeypatch.setenv(tt_device.MOCK_CLUSTER_ENV, str(tmp_path / "cluster.yaml"))
    return fake


def _open(fake, shape) -> TTDevice:
    """A TTDevice on the fake card, with the submeshes its opening made (to ask each chip's grid) forgotten."""
    device = TTDevice(shape)
    fake.submeshes.clear()
    return device


def test_stage_devices_are_one_chip_devices_over_the_submeshes_row_major(monkeypatch, tmp_path):
    fake = _fake_card(monkeypatch, tmp_path, [(8, 8), (8, 8)])
    parent = _open(fake, (1, 2))
    stages = parent.stage_devices()
    assert len(stages) == 2 and all(isinstance(s, TTDevice) for s in stages)
    assert [s.mesh for s in stages] == fake.submeshes  # in ttnn's order: row-major over the mesh
    assert [s.chip_grids for s in stages] == [[(0, 8, 8)], [(1, 8, 8)]]
    for s in stages:
        caps = s.capabilities
        assert caps.mesh_shape == (1, 1) and not caps.has_mesh and not caps.models_time and caps.transfer_queue
        assert s.mock and s.num_chips == 1
    assert parent.stage_devices() == stages  # made once: the parent owns them
    assert len(fake.submeshes) == 2


def test_a_parent_runs_nothing_once_its_chips_are_handed_to_stage_devices(monkeypatch, tmp_path):
    _fake_card(monkeypatch, tmp_path, [(8, 8), (8, 8)])
    parent = TTDevice((1, 2))
    parent.stage_devices()
    with pytest.raises(tt_device.TTDeviceClosed, match="handed its chips to its stage devices"):
        parent.allocate((32, 32), DataFormat.Float16_b)


def test_stage_devices_are_refused_once_the_parent_made_a_tensor_or_of_a_stage(monkeypatch, tmp_path):
    from ttprefill.device.tt_stages import StageDevicesError

    _fake_card(monkeypatch, tmp_path, [(8, 8), (8, 8)])
    used = TTDevice((1, 2))
    used.allocate((32, 32), DataFormat.Float16_b)
    with pytest.raises(StageDevicesError, match="has made tensors.*right after opening it"):
        used.stage_devices()
    fresh = TTDevice((1, 2))
    stage = fresh.stage_devices()[0]
    with pytest.raises(StageDevicesError, match="is a stage device"):
        stage.stage_devices()


def test_a_one_chip_mesh_gives_one_stage_device_under_the_same_rules(monkeypatch, tmp_path):
    fake = _fake_card(monkeypatch, tmp_path, [(8, 8)])
    parent = _open(fake, (1, 1))
    (stage,) = parent.stage_devices()
    assert stage is not parent and stage.mesh is fake.submeshes[0] and stage.capabilities.mesh_shape == (1, 1)
    with pytest.raises(tt_device.TTDeviceClosed, match="handed its chips"):
        parent.num_chips


def test_a_stage_closes_its_submesh_only_and_the_parent_closes_the_rest_first(monkeypatch, tmp_path):
    fake = _fake_card(monkeypatch, tmp_path, [(8, 8), (8, 8)])
    parent = _open(fake, (1, 2))
    first, second = parent.stage_devices()
    sub0, sub1 = fake.submeshes
    first.close()
    assert fake.closed_meshes == [sub0] and not fake.mesh.closed and fake.fabric == ["FABRIC_1D"]
    with pytest.raises(tt_device.TTDeviceClosed, match=r"stage device was closed \(its close\(\)\)"):
        first.allocate((32, 32), DataFormat.Float16_b)
    assert second.allocate((32, 32), DataFormat.Float16_b).address == 1 << 20  # the other stage runs on
    parent.close()
    # the stage still open, then the parent's own mesh, then the fabric it configured
    assert fake.closed_meshes == [sub0, sub1, fake.mesh] and fake.fabric == ["FABRIC_1D", "DISABLED"]
    assert first.closed and second.closed and parent.closed
    with pytest.raises(tt_device.TTDeviceClosed, match="closed with the TTDevice whose chip it drove"):
        second.allocate((32, 32), DataFormat.Float16_b)
    parent.close()  # closed already: nothing to do
    assert fake.closed_meshes == [sub0, sub1, fake.mesh]


def test_a_failing_stage_close_still_closes_the_parent(monkeypatch, tmp_path):
    fake = _fake_card(monkeypatch, tmp_path, [(8, 8), (8, 8)])
    parent = _open(fake, (1, 2))
    first, _ = parent.stage_devices()

    def failing_close():
        raise RuntimeError("submesh close failed")

    monkeypatch.setattr(first, "close", failing_close)
    with pytest.raises(RuntimeError, match="submesh close failed"):
        parent.close()
    assert fake.mesh.closed and parent.closed and fake.fabric == ["FABRIC_1D", "DISABLED"]
    assert fake.closed_meshes == [fake.submeshes[1], fake.mesh]


# ---- transfers on the second command queue, ordered after the programs (read_ahead, write_ahead)


class _QueuesTTNN(_StagesTTNN):
    """The fake ttnn recording the queue calls a transfer ahead makes, in order."""

    def __init__(self, grids):
        super().__init__(grids)
        self.calls: list[tuple] = []

    def QueueId(self, queue):
        return queue

    def record_event(self, mesh, queue):
        self.calls.append(("record_event", queue))
        return f"event {len(self.calls)}"

    def wait_for_event(self, queue, event):
        self.calls.append(("wait_for_event", queue, event))

    def event_synchronize(self, event):
        self.calls.append(("event_synchronize", event))

    def from_device(self, tensor, blocking=True, queue_id=None):
        self.calls.append(("from_device", queue_id, blocking))
        return "host copy"

    def Tensor(self, values, **kwargs):
        return "host tensor"

    def copy_host_to_device_tensor(self, host, tensor, cq_id=None):
        self.calls.append(("copy_host_to_device_tensor", cq_id))


def _read_ahead_calls(monkeypatch, tmp_path, *, mock: bool) -> list[tuple]:
    fake = _QueuesTTNN([(8, 8)])
    monkeypatch.setattr(tt_device, "import_ttnn", lambda: fake)
    monkeypatch.setenv(tt_device.MOCK_CLUSTER_ENV, str(tmp_path / "cluster.yaml"))
    device = TTDevice((1, 1))
    device.mock = mock  # the fake opened as a mock; the order is chosen by what the device says it is
    tensor = device.allocate((32, 32), DataFormat.Float16_b)
    fake.calls.clear()
    device.read_ahead(tensor)
    return fake.calls


def test_a_card_orders_a_read_ahead_after_the_programs_on_the_device_without_the_host_waiting(monkeypatch, tmp_path):
    """The transfer queue waits for an event recorded on the programs' queue (ttnn.wait_for_event), so the host
    issues the read and goes on; the read's own event is recorded for whoever takes the copy."""
    program, transfer = tt_device.PROGRAM_QUEUE, tt_device.TRANSFER_QUEUE
    assert _read_ahead_calls(monkeypatch, tmp_path, mock=False) == [
        ("record_event", program), ("wait_for_event", transfer, "event 1"), ("from_device", transfer, False),
        ("record_event", transfer)]


def test_the_mock_orders_a_read_ahead_on_the_host_as_its_wait_for_event_crashes(monkeypatch, tmp_path):
    program, transfer = tt_device.PROGRAM_QUEUE, tt_device.TRANSFER_QUEUE
    assert _read_ahead_calls(monkeypatch, tmp_path, mock=True) == [
        ("record_event", program), ("event_synchronize", "event 1"), ("from_device", transfer, False),
        ("record_event", transfer)]


def test_writing_a_shard_waits_for_the_read_ahead_of_what_it_overwrites(monkeypatch, tmp_path):
    """A read ahead still in flight must land before a write replaces the tensor's contents: write and
    write_shard (the tensor-parallel split's per-chip weights and states) both wait for it first."""
    fake = _QueuesTTNN([(8, 8)])
    monkeypatch.setattr(tt_device, "import_ttnn", lambda: fake)
    monkeypatch.setenv(tt_device.MOCK_CLUSTER_ENV, str(tmp_path / "cluster.yaml"))
    device = TTDevice((1, 1))
    for write in (lambda t: device.write(t, np.zeros((32, 32), np.float32)),
                  lambda t: device.write_shard(t, 0, np.zeros((32, 32), np.float32))):
        tensor = device.allocate((32, 32), DataFormat.Float16_b)
        device.read_ahead(tensor)
        assert fake.calls[-1][0] == "record_event"
        read_landed = f"event {len(fake.calls)}"  # the fake's name for the event it recorded last
        fake.calls.clear()
        write(tensor)
        assert fake.calls == [("event_synchronize", read_landed), ("copy_host_to_device_tensor", None)]
