"""The keys and the disk cache of ``create_kernel``'s choices (a block chosen for a shape): a choice is keyed on
the kernel's generated code and everything else that can change the ranking or its summary, and found again
from the inputs (the assignments and the config) without generating the code first."""

from __future__ import annotations

import json
import numbers
from collections.abc import Sequence
from typing import Any

from . import _cache
from ._generate import with_block
from ._layouts import check_layout_matches, declared_layouts

NOT_IN_THE_CHOICE = ("jobs", "executor", "progress")  # options that change how a ranking runs, not its result


def choice_parts(shape: Sequence[int], device: Any, layout: str, registers: int | None, fallback: int | None,
                 describe_options: dict, rank_options: dict, folding_given: bool,
                 default_block: Sequence[int] | None = None, hip: bool = False) -> list | None:
    """Everything but the kernel that keys ``create_kernel``'s choice: the shape and layout, the device's full
    description, every option that can change the ranking or its summary (whether ``folding`` was given, the
    config's own default block: the summary compares with it), whether nvcc (``hip``: hipcc) can count the
    registers, and the versions of this plugin, pystencils, lbmpy and warpspeed's code and data. None where an
    option is not plain data (the choice is not cached)."""
    import warpspeed

    from . import _registers

    if isinstance(device, str) and device in warpspeed.device_ids():
        dev = device  # a shipped device: its file is in the model version
    else:
        dev = (device if isinstance(device, warpspeed.Device) else warpspeed.device(device)).to_dict()
    try:  # plain data only: no object's repr (an address) in a key; a bad shape is described's to report
        options = json.loads(json.dumps({k: v for k, v in rank_options.items() if k not in NOT_IN_THE_CHOICE}))
        described = json.loads(json.dumps(describe_options))
        extent = [int(n) if isinstance(n, numbers.Integral) and not isinstance(n, bool) else n for n in shape]
    except (TypeError, ValueError):
        return None
    default = None if default_block is None else [int(b) for b in default_block]
    return [extent, layout, registers, fallback, described, options, folding_given, dev, default,
            registers is None and (_registers.find_hipcc() if hip else _registers.find_nvcc()) is not None,
            _cache.code_version(), _cache.model_version()]


def choice_key(kernel: Any, code: str, parts: list) -> str:
    """The key of ``create_kernel``'s choice: the kernel's generated code, its fields' declared layouts and
    :func:`choice_parts`."""
    return _cache.content_key("choice", code, declared_layouts(kernel), *parts)


def inputs_key(assignments: Any, config: Any, parts: list) -> str | None:
    """A key of ``create_kernel``'s inputs: the pickled assignments (:func:`value_digest`: pystencils' fields
    with their types and layouts included), the config's options (its ``repr``, the JIT left out: it changes no
    code) and :func:`choice_parts`. It finds a choice made before without generating the code first; the code
    is still checked against the choice's key (:func:`known_choice`), so a key that misses costs time only.
    None where the assignments do not pickle."""
    cfg = config.copy()
    cfg.jit = None
    digest = value_digest(assignments)
    return _cache.content_key("choice-inputs", digest, repr(cfg), *parts) if digest is not None else None


def value_digest(obj: Any) -> str | None:
    """A hash of ``obj`` pickled with pystencils' data types by name: they fill caches of their own as kernels
    are generated, which would change the plain pickle of the same assignments within a process. What the
    pickle still tells apart is which parts are one shared object: an lbmpy update rule derived in one run
    and read from pystencils' disk cache in the next hash differently (that next run generates its code twice
    once more). None where ``obj`` does not pickle."""
    import hashlib
    import io
    import pickle

    from pystencils.types import PsType

    class ByName(pickle.Pickler):
        def reducer_override(self, o: Any) -> Any:
            return (str, (f"{type(o).__name__}:{o!r}",)) if isinstance(o, PsType) else NotImplemented

    out = io.BytesIO()
    try:
        ByName(out, protocol=4).dump(obj)
    except Exception:  # unpicklable objects: no shortcut
        return None
    return hashlib.sha256(out.getvalue()).hexdigest()


def known_choice(assignments: Any, base: Any, layouts: tuple[str | None, str | None], inputs: str,
                 parts: list) -> Any | None:
    """The kernel of a choice cached for these inputs, generated once with its block; None where there is none
    or where the code generated now is not the code the choice was made for (then the caller starts over).
    ``layouts``: ``layout`` and ``index_layout`` as given, to warn where they differ from the declaration."""
    entry = _cache.read_json("choice-inputs", inputs)
    choice = entry.get("choice") if isinstance(entry, dict) else None
    cached = cached_choice(choice) if isinstance(choice, str) else None
    if cached is None:
        return None
    try:
        kernel = with_block(assignments, base, *cached)
    except Exception:  # the full path reports what pystencils makes of the assignments
        return None
    if choice_key(kernel, kernel.get_c_code(), parts) != choice:
        return None
    check_layout_matches(kernel, layouts[0], index_layout=layouts[1])
    return kernel


def cached_choice(choice: str) -> tuple[tuple[int, ...], dict] | None:
    """(block, metadata) of a cached choice; None where there is none or its file does not hold them."""
    cached = _cache.read_json("choices", choice)
    if not isinstance(cached, dict) or not isinstance(cached.get("metadata"), dict):
        return None
    block = cached.get("block")
    if not isinstance(block, list) or len(block) != 3 or cached["metadata"].get("block") != block or \
            not all(isinstance(b, int) and not isinstance(b, bool) and b > 0 for b in block):
        return None  # a choice stores the best estimate, whose block it is
    return tuple(block), cached["metadata"]


def keep_inputs(kernel: Any, code: str, inputs: str | None, choice: str) -> Any:
    """Remember that ``inputs`` lead to ``choice``, where the kernel's code does not depend on its block (a
    later run then generates the code once); returns ``kernel``."""
    if inputs is not None and kernel.get_c_code() == code:
        _cache.write_json("choice-inputs", inputs, {"choice": choice})
    return kernel


def store_choice(choice: str, block: tuple[int, ...], meta: dict) -> None:
    """Keep a choice on disk: the block and the winning estimate with its ranking summary."""
    _cache.write_json("choices", choice, {"block": list(block), "metadata": meta})
