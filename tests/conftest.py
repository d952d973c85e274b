import pytest


@pytest.fixture(scope="session")
def sim():
    """One simulated device for the whole session (it stays usable after a failed program)."""
    from ttprefill.device.sim_device import SimDevice

    return SimDevice()
