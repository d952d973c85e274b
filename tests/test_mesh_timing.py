"""The Ethernet model's worker-fed path (device/mesh_timing.py): fabric packets of whole pages through the mux
of each link direction, at the per-packet times tt-metal's mux microbenchmark measured.

The expected values are derived here by hand from the sources' figures (the mux's bytes per cycle at its
measured payloads, the fabric's 4352 B payload, the scatter write's 4 chunks), not from the module's own
interpolation; the held-out collectives bound the model against device-timed ttnn collectives."""

from __future__ import annotations

import pytest

from ttprefill import hw
from ttprefill.device.mesh_timing import (
    MESH_TIMING_VERSION,
    calibration,
    collective_time,
    held_out_points,
    mux_packet_seconds,
    packet_bytes,
)
from ttprefill.device.program import DataFormat

# tt-metal fabric_mux_bandwidth_golden.csv, full_size_channel_packet_size rows: payload -> bytes per cycle
MUX_GOLDEN = {16: 0.158602, 1024: 3.13676, 2048: 5.64541, 4096: 9.65427}


def _ns(payload):
    return payload / MUX_GOLDEN[payload]  # 1 GHz: a cycle is a nanosecond


def test_a_packet_holds_the_whole_pages_the_fabric_payload_takes_up_to_four():
    assert packet_bytes(DataFormat.Float16_b.tile_bytes) == 2 * 2048  # 4352 // 2048 = 2
    assert packet_bytes(DataFormat.Bfp8_b.tile_bytes) == 4 * 1088  # 4352 // 1088 = 4, exactly the payload
    assert packet_bytes(DataFormat.Bfp4_b.tile_bytes) == 4 * 576  # 7 fit, the scatter write takes 4
    assert packet_bytes(DataFormat.Float32.tile_bytes) == 4096  # one fp32 tile
    assert packet_bytes(8192) == 4352  # a page larger than a packet goes in full packets
    with pytest.raises(ValueError, match="at least one byte"):
        packet_bytes(0)


def test_mux_packet_time_is_the_measured_rate_at_measured_payloads_and_linear_between():
    for payload in MUX_GOLDEN:
        assert mux_packet_seconds(payload) * 1e9 == pytest.approx(_ns(payload), rel=1e-12)
    assert mux_packet_seconds(3072) * 1e9 == pytest.approx((_ns(2048) + _ns(4096)) / 2)
    # above the largest measured payload: the last segment's slope (bfp8's 4352 B packets)
    slope = (_ns(4096) - _ns(2048)) / 2048
    assert mux_packet_seconds(4352) * 1e9 == pytest.approx(_ns(4096) + 256 * slope)
    times = [mux_packet_seconds(p) for p in (16, 512, 1024, 2000, 2048, 4096, 4352)]
    assert times == sorted(times)


def test_a_large_bf16_gather_is_mux_bound_at_central_and_link_bound_at_low():
    shard = 64 * 2**20  # bytes a chip: a ring of 8 moves 7/2 shards over each link direction
    busiest = 7 * shard / 2
    fixed = hw.ETH_HANDSHAKE_S + 4 * hw.ETH_HOP_LATENCY_S  # ceil(7 / 2) hops
    central = collective_time("all_gather", shard, 8, "ring", 1, "central")
    assert central.seconds == pytest.approx(fixed + busiest / (MUX_GOLDEN[4096] * 1e9), rel=1e-9)
    assert central.worker_path_s > central.link_s
    low = collective_time("all_gather", shard, 8, "ring", 1, "low")
    raw = hw.ETH_LINK_RAW_BYTES_PER_S
    assert low.seconds == pytest.approx(fixed + busiest / (raw * hw.ETH_PAYLOAD_EFFICIENCY_BY_SETTING["low"]))
    assert low.worker_path_s == 0.0
    # two links: each has its own mux a direction, so the transfer halves
    two = collective_time("all_gather", shard, 8, "ring", 2, "central")
    assert two.seconds - fixed == pytest.approx((central.seconds - fixed) / 2)
    # nothing beats the raw link
    assert low.seconds > busiest / raw


def test_bfp8_pages_go_four_to_a_packet_and_the_packets_set_the_time():
    shard = 4096 * 1088  # 4096 bfp8 tiles a chip, N300 (a line of two): all of it crosses one way
    t = collective_time("all_gather", shard, 2, "line", 1, "central", DataFormat.Bfp8_b.tile_bytes)
    packets = 4096 / 4
    per_packet_ns = _ns(4096) + 256 * (_ns(4096) - _ns(2048)) / 2048
    want = hw.ETH_HANDSHAKE_S + hw.ETH_HOP_LATENCY_S + packets * per_packet_ns * 1e-9
    assert t.packet_bytes == 4352 and t.seconds == pytest.approx(want, rel=1e-9)


def test_all_reduce_charges_both_phases_with_the_worker_path():
    x = 2048 * 5120 * 2  # a chunk's bf16 partial sums, [2048, 5120]
    ar = collective_time("all_reduce", x, 4, "line", 1, "central")
    rs = collective_time("reduce_scatter", x, 4, "line", 1, "central")
    ag = collective_time("all_gather", x / 4, 4, "line", 1, "central")
    assert ar.seconds == pytest.approx(rs.seconds + ag.seconds)
    # each phase moves 3/4 of x over the end link of the line, through the mux
    fixed = hw.ETH_HANDSHAKE_S + 3 * hw.ETH_HOP_LATENCY_S
    assert rs.seconds == pytest.approx(fixed + 0.75 * x / (MUX_GOLDEN[4096] * 1e9))


def test_held_out_collectives_bound_the_model():
    """Against device-timed ttnn collectives (none set a constant). Central stays optimistic on the Qwen3.5
    demo's gathers (0.70-0.86: the workers' own per-packet cost is not modeled) and within 10 % of the large
    DiT and Mixtral gathers; small gathers are dominated by op overheads the model leaves out."""
    points = held_out_points("central")
    assert all(p["held_out"] for p in points)
    for p in points:
        low, high = p["ratio"]
        if p["measured_s"][0] >= 1e-3:  # large gathers: the transfer dominates
            assert 0.69 <= low and high <= 1.10, p
        else:
            assert high <= 1.0, p  # never pessimistic where fixed costs dominate
    lows = {p["collective"]: p["modeled_s"] for p in held_out_points("low")}
    for p in points:  # the worker path only adds
        assert p["modeled_s"] >= lows[p["collective"]]


def test_calibration_summary_names_its_model_version():
    c = calibration("central")
    assert c["mesh_timing_version"] == MESH_TIMING_VERSION and c["held_out_points"] == len(c["points"])
    assert c["held_out_ratio_min"] <= c["held_out_ratio_max"]
    high = calibration("high")
    assert high["held_out_points"] < len(high["points"])  # the Qwen points set the high share


def test_the_simulated_mesh_packs_each_tensor_by_its_own_tiles():
    from ttprefill.device.mesh import SimMesh

    mesh = SimMesh((1, 2), timing_only=True)
    mesh.all_gather(mesh.allocate((1024, 2048), DataFormat.Bfp8_b), 1)
    (stage,) = mesh.last_report.extra["collective"]
    assert stage["packet_bytes"] == 4 * 1088
    tiles = 1024 * 2048 // 1024  # one chip's shard crosses the one link of a pair
    per_packet_ns = _ns(4096) + 256 * (_ns(4096) - _ns(2048)) / 2048
    want = hw.ETH_HANDSHAKE_S + hw.ETH_HOP_LATENCY_S + tiles / 4 * per_packet_ns * 1e-9
    assert mesh.last_report.extra["modeled_s"] == pytest.approx(want, rel=1e-9)


def test_bench_calibration_reports_the_collectives_apart_from_the_chip(monkeypatch):
    import ttprefill.calibration as calibration_module
    from ttprefill.bench import DeviceChoice

    monkeypatch.setattr(calibration_module, "calibrate", lambda costs, progress=None: {"cost_setting": costs})

    class Args:
        device = DeviceChoice(backend="sim", timing_only=True, trace=False, costs="low")

    result = calibration_module.bench_calibration(Args())
    assert result["collectives"]["cost_setting"] == "low" and result["collectives"]["points"]
    assert all(p["costs"] == "low" for p in result["collectives"]["points"])
