"""Write tests/golden/estimates.json: the JSON of every shipped stencil kernel on every shipped device.

The golden test (tests/model/test_golden.py) compares today's outputs with this file, every number to float noise
and every key (the version and the prose notes aside), so that a restructuring cannot change a number
unnoticed. A change of the model that is meant to change numbers
regenerates the file on purpose (``python tests/golden/make_golden.py``) and says so in its commit.
"""

import json
import sys
from pathlib import Path

from warpspeed.application.estimating import estimate, with_model
from warpspeed.application.resolve import resolve_kernel
from warpspeed.device import device, device_ids
from warpspeed.model.launch import LaunchError
from warpspeed.model.line_volumes import applies as lines_apply
from warpspeed.model.range_volumes import applies

GOLDEN = Path(__file__).with_name("estimates.json")
KERNELS = {"copy": (1048576, 1, 1), "star2d-r1": (1024, 1024, 1), "star3d-r1": (256, 128, 128),
           "star3d-r4": (640, 512, 512), "box3d-r1": (256, 128, 128)}
CONFIGS = (((32, 4, 8), (1, 1, 1)), ((64, 2, 2), (1, 2, 1)), ((256, 1, 1), (1, 1, 1)))
LOW_OCCUPANCY = ("star3d-r1", (32, 2, 2), (1, 1, 1), 255)  # 8 warps per SM: latency-bound on most GPUs


def ranges_kernels() -> list[str]:
    """The golden kernels that the ``ranges`` footprint counter counts (all but array-of-structures ones)."""
    return [name for name, domain in KERNELS.items()
            if all(applies(resolve_kernel(name, domain), g, exact) for g, exact in ((32, True), (128, False)))]


def lines_kernels() -> list[str]:
    """The golden kernels that the ``lines`` footprint counter counts."""
    return [name for name, domain in KERNELS.items()
            if all(lines_apply(resolve_kernel(name, domain), g, exact) for g, exact in ((32, True), (128, False)))]


def documents(counter: str | None = None, devices: list[str] | None = None,
              kernels: list[str] | None = None) -> dict[str, dict]:
    """'kernel|device|block|folding|model' -> the estimate's JSON (or the launch error's text); ``counter``
    forces a footprint counter (``warpspeed.model.counters``), ``devices`` a subset of the shipped devices,
    ``kernels`` a subset of the golden kernels."""
    out: dict[str, dict] = {}

    def both_models(key: str, e, dev) -> None:
        out[key + "|latency"] = e.to_dict()
        out[key + "|roofline"] = with_model(e, dev, "roofline").to_dict()

    for name, domain in KERNELS.items():
        if kernels is not None and name not in kernels:
            continue
        kernel = resolve_kernel(name, domain)
        for dev_id in devices or device_ids():
            dev = device(dev_id)
            for block, folding in CONFIGS:
                if kernel.domain[1] == 1:  # 1-D: one row of threads
                    block = (block[0] * block[1] * block[2], 1, 1)
                elif kernel.domain[2] == 1:
                    block = (block[0], block[1] * block[2], 1)
                key = f"{name}|{dev_id}|{block}|{folding}"
                try:
                    e = estimate(kernel, dev, block, folding, model="latency", counter=counter)
                except LaunchError as err:
                    out[key] = {"error": str(err)}
                    continue
                both_models(key, e, dev)
    name, block, folding, registers = LOW_OCCUPANCY
    kernel = resolve_kernel(name, KERNELS[name])
    for dev_id in devices or device_ids():
        dev = device(dev_id)
        e = estimate(kernel, dev, block, folding, registers=registers, model="latency", counter=counter)
        both_models(f"{name}|{dev_id}|{block}|{folding}|{registers} registers", e, dev)
    return out


def text(docs: dict[str, dict]) -> str:
    return json.dumps(docs, indent=1) + "\n"


if __name__ == "__main__":
    docs = documents()
    GOLDEN.write_text(text(docs))
    print(f"wrote {GOLDEN} ({len(docs)} documents)", file=sys.stderr)
