"""The many-core DRAM calibration workload (ttprefill/calibration.py dram_stream): its pairing of cores with
DRAM channels is the measurement's "randomly chosen, an equal number of tiles a channel"."""

from __future__ import annotations

from collections import Counter

import pytest

from ttprefill import calibration


@pytest.mark.parametrize("cores", [12, 48])
def test_random_pairing_is_fair_and_uses_distinct_cores(cores):
    pairs = calibration.random_dram_pairing(cores, seed=0)
    assert len({(c.x, c.y) for c, _ in pairs}) == cores
    assert all(0 <= c.x < 8 and 0 <= c.y < 8 for c, _ in pairs)
    assert Counter(b for _, b in pairs) == {b: cores // 12 for b in range(12)}


def test_the_pairing_is_reproducible_and_depends_on_the_seed():
    def key(pairs):
        return [(c.x, c.y, b) for c, b in pairs]

    assert key(calibration.random_dram_pairing(48, 0)) == key(calibration.random_dram_pairing(48, 0))
    assert key(calibration.random_dram_pairing(48, 0)) != key(calibration.random_dram_pairing(48, 1))


def test_a_core_count_the_channels_cannot_share_equally_is_refused():
    with pytest.raises(ValueError, match="multiple of 12"):
        calibration.random_dram_pairing(20, 0)
