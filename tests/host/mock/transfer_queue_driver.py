"""TTDevice's transfer queue on ttnn's mock n150 (1x1) or n300 (1x2), in a process of its own (ttnn holds one
cluster per process):

    python transfer_queue_driver.py n150|n300 report.json

The device opens with two command queues; programs go on the first, read_ahead / write_ahead on the second
(ttnn.from_device(blocking=False, queue_id=1), ttnn.copy_host_to_device_tensor(cq_id=1), ordered by
ttnn.record_event / ttnn.event_synchronize). A mock executes no kernel and reads give zeros, so the report
holds what the host path did: each call accepted or its error, the shapes that came back, what was left in
flight.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from mesh_driver import _copy_program  # noqa: E402
from mock_env import MESH_SHAPES  # noqa: E402

from ttprefill.device.program import DataFormat  # noqa: E402
from ttprefill.device.tt_device import TRANSFER_QUEUE, TTDevice  # noqa: E402

BF16 = DataFormat.Float16_b


def main(cluster: str, path: str) -> None:
    report: dict = {"cluster": cluster, "steps": {}}

    def step(name, fn):
        try:
            out = fn()
            report["steps"][name] = "ok"
            return out
        except Exception as e:  # noqa: BLE001 - the report names it
            report["steps"][name] = f"{type(e).__name__}: {e}\n{traceback.format_exc()[-1500:]}"
            return None

    dev = TTDevice(MESH_SHAPES[cluster])
    try:
        ttnn = dev._ttnn
        values = np.arange(64 * 64, dtype=np.float32).reshape(64, 64) / 64
        src = dev.upload(np.zeros((64, 64), np.float32), BF16)
        dst, other = dev.allocate((64, 64), BF16), dev.allocate((64, 64), BF16)
        # a raw call on queue 1: a device opened with one queue refuses it (TT_FATAL cq_id 1 is out of range)
        step("raw_read_on_queue_1", lambda: ttnn.event_synchronize(
            (ttnn.from_device(src.ttnn_tensor, blocking=False, queue_id=ttnn.QueueId(TRANSFER_QUEUE)),
             ttnn.record_event(dev.mesh, ttnn.QueueId(TRANSFER_QUEUE)))[1]))
        step("write_ahead", lambda: dev.write_ahead(src, values))
        report["writes_in_flight_before_run"] = len(dev._inbound)
        step("run_after_write_ahead", lambda: dev.run(_copy_program(src, dst, 2)))
        report["writes_in_flight_after_run"] = len(dev._inbound)
        step("read_ahead", lambda: dev.read_ahead(dst))
        step("run_beside_the_read", lambda: dev.run(_copy_program(src, other, 2)))
        got = step("download_of_the_landed_copy", lambda: dev.download(dst))
        report["landed_shape"] = None if got is None else list(got.shape)
        pages = step("read_pages_of_the_landed_copy", lambda: dev.read_pages(dst, 0, dst.num_pages))
        report["landed_bytes"] = None if pages is None else int(len(pages))
        step("read_ahead_then_overwrite", lambda: (dev.read_ahead(other), dev.run(_copy_program(src, other, 2))))
        report["reads_kept_after_overwrite"] = sum(1 for t, *_ in dev._landed.values() if t is other)
        step("read_ahead_then_free", lambda: (dev.read_ahead(dst), dev.free(dst)))
        report["reads_kept_after_free"] = len(dev._landed)
        if dev.num_chips > 1:
            shards = step("download_shards_of_a_read_ahead",
                          lambda: (dev.read_ahead(other), dev.download_shards(other))[1])
            report["shards"] = None if shards is None else [list(s.shape) for s in shards]
            page = step("read_shard_pages_of_a_read_ahead", lambda: dev.read_shard_pages(other, 1, 0, 1))
            report["shard_page_bytes"] = None if page is None else int(len(page))
        step("free_the_rest", lambda: (dev.free(src), dev.free(other)))
    finally:
        dev.close()
    Path(path).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
