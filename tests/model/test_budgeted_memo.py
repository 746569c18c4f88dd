"""The memo kept under a size budget (warpspeed.model.budgeted_memo): what it keeps and when it drops."""

from warpspeed.model.budgeted_memo import BudgetedMemo


def test_values_are_kept_until_the_next_would_exceed_the_budget_then_all_are_dropped():
    memo: BudgetedMemo[str] = BudgetedMemo(10)
    assert memo.put("a", "A", 4) == "A" and memo.put("b", "B", 6) == "B"
    assert (memo.get("a"), memo.get("b")) == ("A", "B")  # 10 of 10
    memo.put("c", "C", 1)  # 11: everything before goes
    assert (memo.get("a"), memo.get("b"), memo.get("c")) == (None, None, "C")


def test_a_value_larger_than_the_budget_is_kept_alone():
    memo: BudgetedMemo[int] = BudgetedMemo(3)
    memo.put("small", 1, 1)
    memo.put("large", 2, 5)
    assert memo.get("small") is None and memo.get("large") == 2
    memo.put("next", 3, 1)
    assert memo.get("large") is None and memo.get("next") == 3
