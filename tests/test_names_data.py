"""The invented names of lesson 10 (autograd_lab/data/names.py): the shipped file is what the
generator writes, and the list keeps the promises the lesson relies on."""

import doctest

import autograd_lab.data.names as names_module
from autograd_lab.data import load_names


def test_the_shipped_file_is_what_make_names_writes():
    assert load_names() == names_module.make_names()


def test_names_are_distinct_lowercase_words_of_3_to_10_letters():
    words = load_names()
    assert len(words) == 4000 == len(set(words))
    assert all(w.isascii() and w.isalpha() and w.islower() for w in words)
    assert {len(w) for w in words} <= set(range(3, 11))
    # every letter occurs, so the lesson's 27 characters (26 letters and '.') are all used
    assert set("".join(words)) == set("abcdefghijklmnopqrstuvwxyz")


def test_a_different_seed_gives_a_different_list():
    assert names_module.make_names(50, seed=1) != names_module.make_names(50, seed=2)


def test_the_module_docstring_example_is_true():
    result = doctest.testmod(names_module)
    assert result.attempted > 0 and result.failed == 0
