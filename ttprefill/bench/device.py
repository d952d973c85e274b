"""The device a benchmark runs on, and its trace file."""

from __future__ import annotations

from .options import DeviceChoice


def cost_setting(choice: DeviceChoice) -> str:
    """The timing model's cost setting a simulator benchmark runs at (sim_device.COST_SETTINGS)."""
    from ttprefill.device.sim_device import DEFAULT_COST_SETTING

    return choice.costs or DEFAULT_COST_SETTING


def device_for(choice: DeviceChoice):
    """An executor of the chosen backend; timing-only, trace and costs apply to backends that model time."""
    from ttprefill.device.backends import backend_info, open_device

    if backend_info(choice.backend).models_time:
        return open_device(choice.backend, timing_only=choice.timing_only, trace=bool(choice.trace),
                           costs=cost_setting(choice))
    if choice.timing_only:
        raise ValueError(f"--timing-only is a simulator option; drop it with --backend {choice.backend}")
    return open_device(choice.backend)


def finish_trace(choice: DeviceChoice, report) -> None:
    """Write the run's Chrome/Perfetto trace if one was asked for."""
    if choice.trace:
        from ttprefill.device.trace import write_chrome_trace

        write_chrome_trace(report, choice.trace)
