"""One-chip stage devices over a card mesh's 1x1 submeshes (TTDevice.stage_devices), for the pipeline split.

Stage k is chip k of the parent's mesh in row-major order: ttnn's MeshDevice.create_submeshes(MeshShape(1, 1))
stamps the 1x1 shape over the mesh coordinates in row-major order, and each stage is a TTDevice over one of those
submeshes (TTDevice.over_open_mesh), with the same fields and methods as a one-chip TTDevice.

What a submesh shares with its parent, from tt-metal's tt_metal/distributed/mesh_device.cpp (MeshDeviceImpl::
create_submesh, initialize_impl, close_impl, quiesce_devices) and fd_mesh_command_queue.cpp, read at a revision
with MeshDeviceImpl, as ttnn 0.81.1's libtt_metal.so has (its create_submesh and close-check messages are in that
library too):
- Shared: the opened chips themselves (the parent's ScopedDevices: a chip stays open until the parent and every
  submesh holding it are closed), and each chip's hardware command queues. A MeshCommandQueue writes to its chips'
  own queues (device->sysmem_manager()), so the parent's queue k and a submesh's queue k are the same hardware
  queue of a chip.
- Its own: the view of its chips, its program cache, its allocator (a new L1BankingAllocator made from the
  parent's allocator config: it starts empty and does not see the parent's buffers; on 0.81.1's mock n300 a
  submesh's first buffer gets the address of a live parent buffer), its sub-device manager, and one
  MeshCommandQueue per hardware queue (as many as the parent opened with: two) with its own host-side dispatch
  state (worker counters, kernel-config ring, launch-message pointers), its own dispatch and reader thread pools
  and a completion-reader thread per queue.

The rules that follow, which stage_devices keeps:
- One mesh at a time may use a chip's hardware queue: each mesh's host-side dispatch state assumes it alone
  advances the chip's dispatcher, and close_impl refuses to close a parent or a submesh while the other has used
  the same queue too ("MeshDevice cq ID {} is in use by child submesh ..."). ttnn's hand-over, quiesce_devices,
  hangs on 0.81.1's mock on a fresh mesh and fails ("Invalid argument") after a transfer, so it is not relied on:
  stage devices are made only from a parent that never made a tensor (so it never used its queues), and the
  parent runs nothing from then on (TTDevice.mesh refuses).
- A stage's allocations live on its own chip only. The stages' allocators are independent (stage 0 and stage 1
  hand out the same addresses, each on its own chip), and none overlaps a parent buffer: the parent holds none.
- Concurrency: two stages are on different chips, so their command queues are different hardware queues and work
  enqueued on stage 0 and on stage 1 runs at the same time on the card. One host thread drives every stage, so it
  must never wait for one stage while another has nothing queued: TTDevice.run issues a program and returns, a
  read or write ahead is ordered after the programs on the device (TTDevice._transfers_after_programs), and the
  pipeline stack takes a stage run's results (DeviceStack.start, then finish) only when the next stage needs its
  rows or the engine its states, after it has issued the runs that can go on meanwhile (pipeline_timing.
  forward_runs' order). On an n300 only chip 0 is on PCIe: chip 1's queues are reached through chip 0 and its
  Ethernet, so both stages' host transfers share chip 0's PCIe link (as device/host_link.py models it).
- Closing: a stage's close() closes its own submesh only. The parent's close() closes every stage still open
  first (children before the parent, as ttnn wants), then its own mesh, then the fabric it configured. A closed
  stage refuses use with an error that says how it was closed.

Nothing here has run on silicon. tests/host/mock/test_mock_stages.py runs the host path on ttnn's mock n150 and
n300, where no kernel executes and reads give zeros.
"""

from __future__ import annotations

from .tt_device import TTDevice


class StageDevicesError(RuntimeError):
    """Stage devices cannot be made from this TTDevice."""


def open_stage_devices(parent: TTDevice) -> list[TTDevice]:
    """A one-chip TTDevice over each 1x1 submesh of `parent`'s mesh, row-major (TTDevice.stage_devices)."""
    mesh = parent.mesh  # raises if the parent is closed
    if parent._is_stage:
        raise StageDevicesError("this TTDevice is a stage device (one chip already): take stage devices of the "
                                "TTDevice that opened the mesh")
    if parent._made_tensors:
        raise StageDevicesError(
            "this TTDevice has made tensors, so it has used its chips' command queues and may hold buffers: ttnn "
            "lets one mesh at a time use a chip's command queue, and a submesh's allocator does not see the parent's "
            "buffers (device/tt_stages.py). Take stage_devices() of a TTDevice right after opening it")
    if parent._sub_devices is not None:
        raise StageDevicesError("this TTDevice has its sub-devices open (open_sub_devices): stage devices are made "
                                "from a TTDevice without them; close_sub_devices() first")
    ttnn = parent._ttnn
    submeshes = mesh.create_submeshes(ttnn.MeshShape(1, 1))
    rows, cols = parent.capabilities.mesh_shape
    if len(submeshes) != rows * cols:
        raise StageDevicesError(f"ttnn gave {len(submeshes)} one-chip submeshes of the {rows}x{cols} mesh; "
                                f"expected {rows * cols}")
    stages: list[TTDevice] = []
    try:
        for sub in submeshes:
            stage = TTDevice.over_open_mesh(ttnn, sub, (1, 1), mock=parent.mock)
            stage._is_stage = True
            stage._closed_why = "this stage device was closed (its close())"
            stages.append(stage)
    except BaseException:
        # The submeshes not wrapped yet close when ttnn drops them (a MeshDevice closes itself on destruction).
        for stage in stages:
            stage.close()
        raise
    return stages


def close_with_parent(stage: TTDevice) -> None:
    """Closes a stage device as part of its parent's close(), so that using it later says so."""
    if not stage.closed:
        stage._closed_why = ("this stage device was closed with the TTDevice whose chip it drove: open a TTDevice "
                             "and take its stage_devices() again")
    stage.close()
