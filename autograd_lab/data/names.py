"""A list of made-up first names, for character-level language models (lesson 10, makemore).

    >>> from autograd_lab.data import load_names
    >>> words = load_names()
    >>> len(words), words[:3]
    (4000, ['loina', 'joe', 'shelyn'])

Karpathy's makemore lectures train on a list of real first names. Ours are invented: each name is
glued together from syllables drawn with Python's `random.Random(seed)`, so the list is ours to
ship, needs no download, and is the same on every machine. The names look name-like enough for a
bigram model to find real structure (which letters start names, which end them, which follow
which), which is all the lesson needs.

`names.txt` next to this file holds the list, one name per line, as the lecture's file does;
`make_names()` wrote it (`python -m autograd_lab.data.names` writes it again, and a test checks
that the two agree).
"""

import random
from pathlib import Path

NAMES_FILE = Path(__file__).with_name("names.txt")

# Syllable pieces with weights: how often each is drawn. Common letters get big weights, so the
# bigram counts come out uneven, as in real names.
ONSETS = {
    "": 6,
    "b": 3,
    "br": 1,
    "c": 3,
    "ch": 1,
    "d": 4,
    "dr": 1,
    "f": 1,
    "g": 2,
    "gr": 1,
    "h": 2,
    "j": 3,
    "k": 3,
    "l": 5,
    "m": 5,
    "n": 4,
    "p": 1,
    "r": 5,
    "s": 4,
    "sh": 2,
    "st": 1,
    "t": 4,
    "th": 1,
    "tr": 1,
    "v": 2,
    "w": 1,
    "z": 1,
}
VOWELS = {
    "a": 10,
    "e": 8,
    "i": 6,
    "o": 4,
    "u": 1,
    "y": 1,
    "ai": 1,
    "ea": 1,
    "ia": 1,
    "ie": 1,
    "ou": 1,
}
MIDDLES = {"l": 5, "n": 5, "r": 5, "m": 2, "s": 2, "v": 1, "d": 2, "t": 1, "x": 1, "nd": 1, "ll": 1}
ENDINGS = {
    "": 4,
    "a": 8,
    "ah": 2,
    "e": 3,
    "ie": 3,
    "y": 4,
    "ey": 1,
    "n": 6,
    "en": 2,
    "on": 3,
    "an": 3,
    "el": 2,
    "er": 1,
    "lyn": 2,
    "ley": 2,
    "son": 1,
    "ette": 1,
    "ia": 2,
    "ina": 2,
    "o": 2,
    "us": 1,
    "is": 1,
    "iah": 1,
    "x": 1,
    "q": 0.2,
}


def make_names(count=4000, seed=2024):
    """`count` different made-up names, lowercase a-z, 3 to 10 letters, in a shuffled order."""
    rng = random.Random(seed)

    def draw(table):
        return rng.choices(list(table), weights=list(table.values()))[0]

    seen, names = set(), []
    while len(names) < count:
        name = draw(ONSETS) + draw(VOWELS)
        for _ in range(rng.choices([0, 1, 2], weights=[5, 4, 1])[0]):
            name += draw(MIDDLES) + draw(VOWELS)
        name += draw(ENDINGS)
        if 3 <= len(name) <= 10 and name not in seen and not _looks_wrong(name):
            seen.add(name)
            names.append(name)
    return names


def _looks_wrong(name):
    """Glued syllables can clash: three vowels in a row ('taia'), a doubled vowel ('lavaa')."""
    vowel = [letter in "aeiouy" for letter in name]
    three_vowels = any(a and b and c for a, b, c in zip(vowel, vowel[1:], vowel[2:]))
    doubled_vowel = any(a == b and a in "aiuy" for a, b in zip(name, name[1:]))
    return three_vowels or doubled_vowel


def load_names():
    """The shipped list (names.txt), one name per entry: what the lecture's `open(...)` reads."""
    return NAMES_FILE.read_text().splitlines()


if __name__ == "__main__":
    NAMES_FILE.write_text("\n".join(make_names()) + "\n")
    print(f"wrote {NAMES_FILE}")
