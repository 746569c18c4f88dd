"""The ``warpspeed`` header of a kernel_tuner file being read, and what it says about the rows: their parameter
names, device, domain and kernel, each checked against the one given (:func:`read_header`, :func:`header_names`,
:func:`header_device`, :func:`header_domain`, :func:`file_kernel`), and the device it records
(:func:`recorded_devices`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...application.resolve import resolve_device, resolve_kernel
from ...device import Device
from ...errors import InputError
from ...kernel import Kernel
from ...model.launch import triple
from .files import load_json
from .names import NAMES, ParameterNames, checked_names
from .origin import kernel_description, same_kernel

_META_KEYS = (("kernel", str, "a kernel name"), ("kernel_spec", str, "a catalog name or kernel file"),
              ("kernel_description", dict, "a kernel's TOML table"),
              ("device", str, "a device id"), ("device_spec", str, "a device id or device file"),
              ("device_overrides", dict, "an object of device keys and values"))
"""The header keys warpspeed reads: each one's type and what an error asks for."""


def read_header(doc: Any, p: Path) -> tuple[str, dict, str]:
    """(kind, the ``warpspeed`` object, its key) of a cache (``cache``) or T4 results (``T4``) document."""
    if not isinstance(doc, dict):
        raise InputError(f"{p}: a kernel_tuner cache or T4 results file is a JSON object, got "
                         f"{type(doc).__name__}.")
    if "cache" in doc:
        kind, meta, meta_key = "cache", doc.get("warpspeed", {}), "warpspeed"
    elif "results" in doc:
        kind, meta_key = "T4", "metadata.warpspeed"
        meta = doc.get("metadata", {}).get("warpspeed", {}) if isinstance(doc.get("metadata"), dict) else {}
    else:
        raise InputError(f"{p}: neither a kernel_tuner cache file (key 'cache') nor a T4 results file (key "
                         f"'results'); its keys: {', '.join(map(str, doc)) or 'none'}.")
    if not isinstance(meta, dict):
        raise InputError(f"{p}: key {meta_key} is {meta!r}, not an object.")
    _check_keys(meta, meta_key, p)
    return kind, meta, meta_key


def _check_keys(meta: dict, meta_key: str, p: Path) -> None:
    for key, kinds, what in _META_KEYS:
        if key in meta and not (isinstance(meta[key], kinds) and meta[key]):
            raise InputError(f"{p}: key {meta_key}.{key} is {meta[key]!r}; give {what}.")


_VARIANT_KEYS = ("kernel", "kernel_spec", "kernel_description")
"""The keys of a variant in a variant ranking's header (``variants``): its kernel and what loads it."""


def variant_header(meta: dict, meta_key: str, select: Mapping[str, Any] | None, p: Path) -> dict:
    """The header to read the rows with: a variant ranking's (keys ``variant_parameter`` and ``variants``, one
    kernel per value of that parameter) with the kernel of the value ``select`` picks in place of its own;
    another header as it is. A variant file read without selecting one value is an :class:`InputError`:
    warpspeed validates one kernel at a time."""
    parameter, variants = meta.get("variant_parameter"), meta.get("variants")
    if parameter is None and variants is None:
        return meta
    if not isinstance(parameter, str) or not parameter or not isinstance(variants, list) or not variants or not all(
            isinstance(v, dict) and "value" in v for v in variants):
        raise InputError(f"{p}: keys {meta_key}.variant_parameter and {meta_key}.variants are {parameter!r} and "
                         f"{variants!r}; give a parameter name and a list of objects with a 'value' each.")
    values = [v["value"] for v in variants]
    if not select or parameter not in select:
        raise InputError(f"{p}: the file holds {len(values)} kernels, one per value of parameter {parameter!r} "
                         f"({', '.join(map(str, values))}); warpspeed reads one kernel's rows: select one, "
                         f"select={{{parameter!r}: {values[0]!r}}} (--select {parameter}={values[0]}).")
    chosen = [i for i, v in enumerate(values) if str(v) == str(select[parameter])]
    if not chosen:
        raise InputError(f"{p}: select {parameter}={select[parameter]!r} is no value of the file's variants (they "
                         f"are {', '.join(map(str, values))}).")
    variant = variants[chosen[0]]
    _check_keys(variant, f"{meta_key}.variants[{chosen[0]}]", p)
    out = {k: v for k, v in meta.items() if k not in ("variant_parameter", "variants", *_VARIANT_KEYS)}
    return {**out, **{k: variant[k] for k in _VARIANT_KEYS if k in variant}}


def header_names(meta: dict, meta_key: str, names: ParameterNames | None, p: Path) -> ParameterNames:
    """The parameter names to read the rows with: those given, else the header's ``block_names`` and
    ``folding_names``, else :data:`~warpspeed.integrations.kernel_tuner.NAMES`."""
    if names is None and ("block_names" in meta or "folding_names" in meta):
        try:
            names = ParameterNames(tuple(meta.get("block_names", NAMES.block)),
                                   tuple(meta.get("folding_names", NAMES.folding)))
        except (InputError, TypeError) as e:
            raise InputError(f"{p}: key {meta_key}.block_names / folding_names: {e}") from None
    return checked_names(names)


def header_device(doc: dict, kind: str, meta: dict, given: str | None, p: Path) -> str:
    """The rows' device: the header's, else the one given, else a cache's ``device_name`` where that is a
    warpspeed id or a GPU's reported name (``NVIDIA H100 80GB HBM3``)."""
    dev = meta.get("device", given)
    why = ""
    if dev is None and kind == "cache" and isinstance(doc.get("device_name"), str):
        from ...device import device_for_gpu_name, device_ids
        if doc["device_name"] in device_ids():
            dev = doc["device_name"]
        else:  # kernel_tuner records the name the GPU reports ("NVIDIA H100 80GB HBM3")
            try:
                dev = device_for_gpu_name(doc["device_name"]).id
            except InputError as e:
                why = f": {e}"
    if not isinstance(dev, str) or not dev:
        found = (f" (device_name {doc['device_name']!r} is no warpspeed device id{why})" if "device_name" in doc
                 else "")
        raise InputError(f"{p}: the file does not name the warpspeed device{found}; give it (device=..., --device "
                         "ID).")
    return dev


def header_domain(doc: dict, kind: str, meta: dict, meta_key: str, given: Sequence[int] | None, p: Path
                  ) -> tuple[tuple[int, int, int], tuple[str, Any]]:
    """The rows' domain (three extents), and where it came from with its extents as written there (``("domain",
    given)`` or the file's key and value): the header's ``domain``, which a given one must equal, else the given
    one, else a cache's ``problem_size`` (kernel_tuner's, often the arrays' extent with halos: a given domain wins
    over it)."""
    dom = meta.get("domain")
    dom_key = f"{meta_key}.domain"
    if dom is None and given is None and kind == "cache" and "problem_size" in doc:
        dom, dom_key = doc["problem_size"], "problem_size"
        dom = [dom] if isinstance(dom, int) else dom
    extents = (dom_key, dom) if given is None else ("domain", given)  # the domain taken, as given
    try:
        dom = None if dom is None else triple(dom, "domain")
    except InputError as e:
        raise InputError(f"{p}: key {dom_key}: {e}") from None
    dom = _given(dom, None if given is None else triple(given, "domain"), "domain", dom_key, p)
    if dom is None:
        raise InputError(f"{p}: the file names no domain (no key {dom_key} or problem_size); give it (domain=..., "
                         "--domain X,Y,Z).")
    return dom, extents


def _given(doc_value, given, what: str, key: str, p: Path):
    """A file's value of ``what`` (None if absent) against the one given: absent -> the given one; both -> they
    must agree."""
    if doc_value is None:
        return given
    if given is not None and given != doc_value:
        raise InputError(f"{p}: key {key} says {what} {doc_value!r}, but {what} {given!r} was given; give none "
                         "(the file's) or fix the file.")
    return doc_value


def load_kernel(spec: str, domain: tuple[int, int, int], what: str, p: Path) -> Kernel:
    """The kernel ``spec`` loads for ``domain``; an error names the file and where the spec came from."""
    try:
        return resolve_kernel(spec, domain)
    except InputError as e:
        raise InputError(f"{p}: {what} {spec!r}: {e}") from None


def file_kernel(meta: dict, meta_key: str, given: str | None, domain: tuple[int, int, int], p: Path) -> str:
    """What loads the rows' kernel: the kernel given, else the file's ``kernel_spec``, else (a file of
    measurements or of an older warpspeed) its ``kernel`` name.

    One rule: the file's reference kernel is its ``kernel_description`` if recorded, else the kernel its
    ``kernel_spec`` loads, else its name; the kernel taken must load the same kernel as the reference
    (:func:`~warpspeed.integrations.kernel_tuner.origin.same_kernel`). Only a file with a name alone also accepts
    a kernel of that name."""
    name, spec, desc = meta.get("kernel"), meta.get("kernel_spec"), meta.get("kernel_description")
    said = f"key {meta_key}.kernel says kernel {name!r}" + (f" ({spec})" if spec and spec != name else "") \
        if name else f"key {meta_key}.kernel_spec says kernel {spec!r}"
    if given is None or given == spec:  # the file's own kernel
        if spec is None and desc is not None:
            raise InputError(f"{p}: the file's kernel {name!r} was ranked as a Kernel object that no catalog name or "
                             f"file loads (no key {meta_key}.kernel_spec); give it (kernel=..., --kernel NAME|"
                             f"FILE.toml): it must be the kernel {meta_key}.kernel_description describes (its TOML "
                             "table).")
        if spec is None:
            return name
        if desc is not None and not same_kernel(
                kernel_description(load_kernel(spec, domain, f"key {meta_key}.kernel_spec", p)), desc):
            raise InputError(f"{p}: key {meta_key}.kernel_spec {spec!r} now loads a kernel other than the one key "
                             f"{meta_key}.kernel_description describes (it changed since the file was written); "
                             "restore it, give the kernel that was ranked (kernel=..., --kernel), or delete key "
                             f"{meta_key}.kernel_description to validate against the kernel as it is now.")
        return spec
    legacy = spec is None and desc is None  # a file of measurements or of an older warpspeed: a name alone
    if legacy and given == name or not (name or spec or desc):
        return given
    g = load_kernel(given, domain, "kernel", p)
    if desc is not None:
        reference = desc
    elif spec is not None:
        reference = kernel_description(load_kernel(spec, domain, f"key {meta_key}.kernel_spec", p))
    else:
        try:
            reference = kernel_description(resolve_kernel(name, domain))
        except InputError:  # the name no longer loads a kernel: the name decides
            reference = None
    # a legacy file also accepts a kernel of its name (an older warpspeed named the 4-byte star star3d-r1)
    if not (reference is not None and same_kernel(kernel_description(g), reference) or legacy and g.name == name):
        raise InputError(f"{p}: {said}, but kernel {given!r} was given, which loads "
                         f"{'another kernel' if g.name == name else f'kernel {g.name!r}'}; give none (the file's), "
                         "one that loads the same kernel, or fix the file.")
    return given


def recorded_devices(path: str | Path) -> dict[str, Device]:
    """The device a file written by warpspeed records (its ``warpspeed`` keys ``device_spec`` and
    ``device_overrides``), by the name its rows carry: ``validate(read_kernel_tuner(p),
    devices=recorded_devices(p))``. Empty for a file that records none.

    Why: the rows name the device by its id, which need not load it again: an id rounds override values
    (``clock_GHz=1.23457GHz`` for 1.234567891 GHz), and the id of a device read from a device file is no
    path. A recorded device that no longer loads (its file moved) is an :class:`InputError`; estimate on
    a device given instead (``validate(rows, device=...)``, ``warpspeed validate FILE.json --device``)."""
    p = Path(path)
    _, meta, meta_key = read_header(load_json(p), p)
    spec, overrides = meta.get("device_spec"), meta.get("device_overrides", {})
    if spec is None or "device" not in meta:
        return {}
    try:
        return {meta["device"]: resolve_device(spec, overrides)}
    except InputError as e:
        raise InputError(f"{p}: key {meta_key}.device_spec {spec!r}"
                         + (f" with {meta_key}.device_overrides" if overrides else "") + f": {e} To estimate on "
                         "another device, give it (validate(rows, device=...), --device ID|FILE.toml).") from None
