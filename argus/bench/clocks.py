"""GPU clocks and state as seen before and after timing (read-only; never set clocks)."""
from __future__ import annotations

import shutil
import subprocess

_QUERY = "clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,pstate"


def read_clocks(index: int = 0) -> dict:
    """SM/memory clock (MHz), max SM clock, temperature, power, via pynvml or nvidia-smi.

    Returns {"source": None} when neither is present: results then say clocks were unseen.
    """
    try:
        import pynvml  # type: ignore
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(index)
        return {"source": "pynvml",
                "sm_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                "mem_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_MEM),
                "max_sm_mhz": pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM),
                "temperature_c": pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU),
                "power_w": pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0}
    except Exception:
        pass
    if shutil.which("nvidia-smi") is None:
        return {"source": None}
    try:
        out = subprocess.run(["nvidia-smi", "-i", str(index), f"--query-gpu={_QUERY}",
                              "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
        fields = [f.strip() for f in out.splitlines()[0].split(",")]
        names = ["sm_mhz", "mem_mhz", "max_sm_mhz", "temperature_c", "power_w", "pstate"]
        rec = {"source": "nvidia-smi"}
        for name, value in zip(names, fields):
            try:
                rec[name] = float(value)
            except ValueError:
                rec[name] = value
        return rec
    except Exception as exc:  # nvidia-smi present but failing: record why
        return {"source": None, "error": str(exc)}
