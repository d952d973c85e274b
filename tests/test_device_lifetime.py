"""Who closes a device: an Engine closes the one it opened itself (on close, at the end of a `with`, and when
its construction fails after opening it), never one passed in; `ttprefill prefill` closes the mesh it opened
on every way out. `--topology ring` is accepted only where the wiring closes a ring, and reaches the device.
The simulator holds nothing open, so a SimDevice that counts its close calls stands in for a card here
(tests/host/mock/ check the card path's TTDevice.close on ttnn's mock)."""

from __future__ import annotations

import numpy as np
import pytest

from ttprefill import cli, engine_cli
from ttprefill.device import backends
from ttprefill.device.sim_device import SimDevice
from ttprefill.engine import Engine, EngineError
from ttprefill.model.config import get_preset
from ttprefill.model.weights import random_weights


class ClosingSim(SimDevice):
    opened: list["ClosingSim"] = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, timing_only=True)
        self.closed = 0
        ClosingSim.opened.append(self)

    def close(self) -> None:
        self.closed += 1


@pytest.fixture
def opened(monkeypatch):
    ClosingSim.opened = []
    monkeypatch.setattr(backends, "open_device", lambda backend, **options: ClosingSim())
    return ClosingSim.opened


def test_an_engine_closes_the_device_it_opened_once(opened):
    with Engine.from_preset("tiny", backend="sim") as engine:
        engine.prefill(np.arange(40))
        assert [d.closed for d in opened] == [0]
    engine.close()  # a second close does nothing
    assert [d.closed for d in opened] == [1]


def test_an_engine_leaves_a_device_it_was_given_open():
    device = ClosingSim()
    config = get_preset("tiny")
    with Engine(config, random_weights(config, seed=0), backend="sim", device=device) as engine:
        engine.prefill(np.arange(40))
    assert device.closed == 0


def test_an_engine_that_fails_after_opening_its_device_closes_it(opened):
    config = get_preset("tiny")
    with pytest.raises(KeyError):  # no weights: the device stack fails loading the first one
        Engine(config, {}, backend="sim")
    assert [d.closed for d in opened] == [1]


@pytest.fixture
def tokens_file(tmp_path):
    path = tmp_path / "ids.txt"
    path.write_text(" ".join(map(str, range(40))))
    return path


@pytest.mark.parametrize("mesh, words", [("1x1", ["one chip has none", "1x8"]),
                                         ("1x2", ["1x2", "closes no ring over axis 1", "--topology line"]),
                                         ("2x4", ["2x4", "closes no ring over axis 0", "1x8"])])
def test_a_ring_where_the_wiring_closes_none_is_refused_before_any_device_opens(capsys, monkeypatch, tokens_file,
                                                                               mesh, words):
    monkeypatch.setattr(engine_cli, "open_device", lambda *a, **k: pytest.fail("a device was opened"))
    code = cli.main(["prefill", "--backend", "sim", "--mesh", mesh, "--topology", "ring", "--tokens",
                     str(tokens_file)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    for word in words:
        assert word in err, (word, err)


def test_the_cli_opens_a_1x8_ring_and_closes_it_when_the_engine_fails(capsys, monkeypatch, tokens_file):
    """tiny with heads for eight chips; a cache budget under one chunk's pages fails the engine after the mesh
    is open."""
    from ttprefill.model import config

    monkeypatch.setitem(config.PRESETS, "tiny-8way", lambda: get_preset("tiny").with_changes(
        name="tiny-8way", gdn_num_qk_heads=4, gdn_num_v_heads=8, attn_num_heads=8, attn_num_kv_heads=2))
    asked = []

    class Mesh(ClosingSim):
        from ttprefill.device.executor import Capabilities

        capabilities = Capabilities(models_time=True, holds_data=True, has_mesh=True, mesh_shape=(1, 8))

    def open_mesh(backend, **options):
        asked.append((backend, options))
        return Mesh()

    ClosingSim.opened = []
    monkeypatch.setattr(engine_cli, "open_device", open_mesh)
    code = cli.main(["prefill", "--backend", "sim", "--mesh", "1x8", "--topology", "ring", "--model", "tiny-8way",
                     "--tokens", str(tokens_file), "--cache-budget-mb", "0.001"])
    err = capsys.readouterr().err
    assert code == 2 and "cache budget" in err, err
    assert asked == [("sim", {"mesh_shape": (1, 8), "topology": "ring"})]
    assert [d.closed for d in ClosingSim.opened] == [1]


def test_closing_an_engine_frees_the_stack_it_built_on_a_device_it_was_given():
    """The weights, K/V pools and states the engine put on a passed-in device are freed by close (on a card, the
    sub-device manager it loaded is removed with them); the device stays open and usable, and the engine refuses
    new work with an error that says what to do."""
    device = ClosingSim()
    before = device.dram_bytes_in_use()
    config = get_preset("tiny")
    engine = Engine(config, random_weights(config, seed=0), backend="sim", device=device)
    engine.prefill(np.arange(40))
    assert device.dram_bytes_in_use() > before
    engine.close()
    engine.close()  # a second close frees nothing twice
    assert device.dram_bytes_in_use() == before and device.closed == 0
    with pytest.raises(EngineError, match="closed.*make a new Engine"):
        engine.submit(np.arange(8))
    again = Engine(config, random_weights(config, seed=0), backend="sim", device=device)  # the device still serves
    again.prefill(np.arange(40))
    again.close()
    assert device.dram_bytes_in_use() == before


def test_an_engine_on_another_engines_stack_leaves_it_built():
    device = ClosingSim()
    config = get_preset("tiny")
    first = Engine(config, random_weights(config, seed=0), backend="sim", device=device)
    second = Engine(config, {}, backend="sim", mixers=first.mixers)
    second.close()
    in_use = device.dram_bytes_in_use()
    first.prefill(np.arange(40))  # the shared stack still holds its weights
    assert device.dram_bytes_in_use() >= in_use
    first.close()


def test_a_closed_engine_refuses_to_run_requests_queued_before_close():
    """Requests submitted before close would run on the freed stack (on the simulator they failed with a bare
    KeyError of a freed tensor); run refuses with the fix instead."""
    device = ClosingSim()
    config = get_preset("tiny")
    engine = Engine(config, random_weights(config, seed=0), backend="sim", device=device)
    engine.submit(np.arange(40))
    engine.close()
    with pytest.raises(EngineError, match="closed.*make a new Engine"):
        engine.run()
    assert engine.failures == {} and engine.results == {}
