"""tests/host: checks against the real ttnn package. They run in .venv-tt (scripts/setup-tt-env):

    .venv-tt/bin/python -m pytest tests/host

Under an interpreter without ttnn (the main .venv) every test here is skipped with that reason.
Tests marked `hardware` need a Tenstorrent card and are skipped, with the reason, without one.
"""

from __future__ import annotations

import importlib.util

import pytest

from ttprefill.device.tt_device import DEVICE_NODES, card_present

HAVE_TTNN = importlib.util.find_spec("ttnn") is not None


def pytest_collection_modifyitems(config, items):
    here = __file__.rsplit("/", 1)[0]
    no_ttnn = pytest.mark.skip(reason="ttnn is not installed here: run tests/host with .venv-tt/bin/python "
                                      "(scripts/setup-tt-env creates it)")
    no_card = pytest.mark.skip(reason=f"needs a Tenstorrent card ({DEVICE_NODES} has no device nodes)")
    for item in items:
        if not str(item.fspath).startswith(here):
            continue
        if not HAVE_TTNN:
            item.add_marker(no_ttnn)
        elif "hardware" in item.keywords and not card_present():
            item.add_marker(no_card)


@pytest.fixture(scope="session")
def ttnn():
    from ttprefill.device.ttnn_env import import_ttnn

    return import_ttnn()
