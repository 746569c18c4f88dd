"""kernel_tuner restriction strings over parameters of string values (a variant parameter's layouts, say) keep
the configurations kernel_tuner's own search space keeps: ``layout == 'fzyx'`` compares the value as a string."""

import pytest

pytest.importorskip("kernel_tuner")

from kernel_tuner.searchspace import Searchspace  # noqa: E402

from warpspeed.integrations.kernel_tuner import rank_tune_params  # noqa: E402

H100 = "H100-SXM5-80GB"
TUNE_PARAMS = {"block_size_x": [128, 256], "block_size_y": [1, 2], "layout": ["fzyx", "zyxf"]}
RESTRICTION = "layout == 'fzyx' or block_size_x == 128"


def test_a_restriction_on_a_string_valued_variant_parameter_keeps_kernel_tuners_space():
    kept_by_kernel_tuner = {(x, y, layout) for x, y, layout in Searchspace(TUNE_PARAMS, [RESTRICTION], 1024).list}
    ranking = rank_tune_params({"layout": {"fzyx": "star3d-r1", "zyxf": "star3d-r4"}}, H100, TUNE_PARAMS,
                               domain=(64, 64, 64), restrictions=RESTRICTION)
    ranked = {(r.configuration.block[0], r.configuration.block[1], r.configuration.value) for r in ranking.results}
    assert ranked == kept_by_kernel_tuner and len(ranked) == 6


def test_a_string_restriction_on_a_plain_string_parameter():
    """A parameter that changes no estimate may hold strings too: the restriction keeps the blocks its values
    allow (here only 128 for 'slow', so 128 and 256 in all)."""
    params = {"block_size_x": [128, 256], "mode": ["slow", "fast"]}
    ranking = rank_tune_params("star3d-r1", H100, params, domain=(64, 64, 64),
                               restrictions="mode == 'fast' or block_size_x == 128")
    assert sorted(r.configuration.block[0] for r in ranking.results) == [128, 256]
