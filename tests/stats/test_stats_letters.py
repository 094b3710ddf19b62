"""Compact letter display (Piepho 2004's insert-and-absorb with sweeping): hand-worked cases
and the defining property on generated significance patterns.

The two compact-letter packages on PyPI are not Piepho's algorithm and are not used as
references: ``compactletterdisplay`` 0.11 splits only the first column that holds a
significant pair (so pairs can keep sharing a letter), ``cld4py`` 1.1 builds groups
greedily."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankhouse.errors import RankhouseError
from rankhouse.stats import compact_letter_display, randomised_tukey_hsd


@pytest.mark.parametrize(
    ("separable", "expected"),
    [
        ([], {"A": "a", "B": "a", "C": "a", "D": "a"}),
        (
            [("A", "B"), ("A", "C"), ("A", "D"), ("B", "C"), ("B", "D"), ("C", "D")],
            {"A": "a", "B": "b", "C": "c", "D": "d"},
        ),
        # Insert A-C: ABCD -> BCD, ABD. Insert A-D: ABD -> BD, AB; BD lies in BCD: absorbed.
        # Insert B-D: BCD -> CD, BC. Columns AB, BC, CD: a, b, c.
        ([("A", "C"), ("A", "D"), ("B", "D")], {"A": "a", "B": "ab", "C": "bc", "D": "c"}),
        # Only the ends differ: ABCD -> BCD, ABC.
        ([("A", "D")], {"A": "a", "B": "ab", "C": "ab", "D": "b"}),
    ],
    ids=["none", "all", "chain", "ends"],
)
def test_hand_worked(separable, expected):
    got = compact_letter_display(["A", "B", "C", "D"], [0.4, 0.3, 0.2, 0.1], separable)
    assert got == expected
    assert list(got) == ["A", "B", "C", "D"]


def test_the_sweep_removes_redundant_letters():
    """A-B and C-D differ among five systems. Insert and absorb leave the columns ACE, ADE,
    BCE, BDE: E in all four. The sweep, column by column: in ACE, E shares ADE with A and
    BCE with C, so E leaves ACE; in ADE, E is now the only link of A and E, and stays; in
    BCE, E shares no other column with C, and stays; in BDE, E shares BCE with B and ADE
    with D, and leaves. Columns AC, ADE, BCE, BD are a, b, c, d: E keeps two letters of
    four."""
    got = compact_letter_display(list("ABCDE"), [0.5, 0.4, 0.3, 0.2, 0.1], [("A", "B"), ("C", "D")])
    assert got == {"A": "ab", "B": "cd", "C": "ac", "D": "bd", "E": "bc"}


def test_best_first_whatever_order_the_systems_come_in():
    got = compact_letter_display(
        ["D", "C", "B", "A"], [0.1, 0.2, 0.3, 0.4], [("A", "C"), ("A", "D"), ("B", "D")]
    )
    assert list(got) == ["A", "B", "C", "D"]
    assert got == {"A": "a", "B": "ab", "C": "bc", "D": "c"}


def test_lower_is_better_puts_the_smallest_mean_first():
    got = compact_letter_display(["A", "B", "C"], [0.1, 0.2, 0.3], [("A", "C")], direction=-1)
    assert list(got) == ["A", "B", "C"] and got["A"] == "a"
    got = compact_letter_display(["A", "B", "C"], [0.1, 0.2, 0.3], [("A", "C")])
    assert list(got) == ["C", "B", "A"] and got["C"] == "a"


def test_equal_means_keep_the_given_order():
    got = compact_letter_display(["x", "y", "z"], [0.2, 0.2, 0.2], [("x", "z")])
    assert list(got) == ["x", "y", "z"]
    assert got == {"x": "a", "y": "ab", "z": "b"}


@st.composite
def _patterns(draw):
    count = draw(st.integers(1, 9))
    names = [f"s{i}" for i in range(count)]
    means = draw(st.lists(st.floats(0, 1), min_size=count, max_size=count))
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    separable = [pair for pair in pairs if draw(st.booleans())]
    return names, means, separable


@settings(max_examples=500, deadline=None)
@given(_patterns())
def test_two_systems_share_a_letter_exactly_when_they_are_not_separable(pattern):
    names, means, separable = pattern
    got = compact_letter_display(names, means, separable)
    apart = {frozenset(pair) for pair in separable}
    assert all(got[name] for name in names)
    assert sorted(got) == sorted(names)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert bool(set(got[a]) & set(got[b])) == (frozenset((a, b)) not in apart)
    best = next(iter(got))
    assert got[best].startswith("a")


def test_from_an_all_pairs_analysis():
    scores = [
        [0.50, 0.60, 0.55, 0.70] * 10,
        [0.49, 0.61, 0.54, 0.69] * 10,
        [0.3, 0.4, 0.35, 0.5] * 10,
    ]
    result = randomised_tukey_hsd(scores, ["new", "old", "weak"], permutations=2000)
    got = compact_letter_display(result.systems, result.means, result.separable(0.05))
    assert got == {"new": "a", "old": "a", "weak": "b"}


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: compact_letter_display(["a", "b"], [0.1], []), "one mean each"),
        (lambda: compact_letter_display(["a", "a"], [0.1, 0.2], []), "distinct systems"),
        (lambda: compact_letter_display(["a", "b"], [0.1, 0.2], [("a", "c")]), "unknown system"),
        (
            lambda: compact_letter_display(["a", "b"], [0.1, 0.2], [], direction=0),
            "ranks nothing",
        ),
    ],
)
def test_bad_input_is_refused(call, message):
    with pytest.raises(RankhouseError, match=message):
        call()
