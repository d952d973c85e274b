"""Every representative program the kernel families register, checked against the real ttnn."""

from __future__ import annotations

import pytest

from ttprefill.device.ttnn_checks import check_program_against_ttnn
from ttprefill.ops import registry

PROGRAMS = registry.discover()


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_registered_program_matches_ttnn(ttnn, name):
    program = PROGRAMS[name]()
    report = check_program_against_ttnn(program, ttnn, raise_on_problem=False)
    assert report.problems == [], "\n".join(report.problems)
    assert report.kernels == len(program.kernels) > 0


def test_register_refuses_a_duplicate_name(monkeypatch):
    monkeypatch.setattr(registry, "TEST_PROGRAMS", {})
    registry.register("x")(lambda: None)
    with pytest.raises(ValueError, match="registered twice"):
        registry.register("x")(lambda: None)
