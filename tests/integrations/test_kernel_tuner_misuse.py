"""The kernel_tuner integration where a newcomer uses it a little wrong, inside real kernel_tuner 1.5 runs
(simulation mode, replaying caches of the model's own times written to tmp_path): the install hint names the
extra as pip matches it."""

import sys

import pytest

from warpspeed import InputError
from warpspeed.integrations import kernel_tuner as wk


def test_a_restriction_string_without_kernel_tuner_names_the_extra_as_pip_matches_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "kernel_tuner.util", None)  # import kernel_tuner.util fails
    with pytest.raises(InputError, match=r"needs kernel_tuner") as err:
        wk.all_of("block_size_x>=32")
    assert "pip install -e '.[kernel-tuner]'" in str(err.value) and "kernel_tuner]" not in str(err.value)
