"""What a spec draws with: the values made so far, and a seeded random.Random behind every choice.

A spec (one family of calls in the api_*.py tables) is a function `draw(d)` registered with `@spec`,
naming the public calls it can make; `d` is a Draw: `d.value()` picks an input, `d.dim(v)`,
`d.dims(v)`, `d.keepdim()`, `d.number()`, `d.scalar_or_tensor(a)`, `d.literal(shape)` draw the
other arguments. About one choice in twenty is wrong on purpose (`d.wrong()`), so the error paths
are compared too.
"""

from dataclasses import dataclass

import numpy as np

from .program import FLOATS

WRONG_ON_PURPOSE = 0.05  # how often a choice breaks the op's rules, to compare the errors


@dataclass
class Value:
    """A value a step may take: its name in the program, and what PyTorch says it is."""

    name: str
    shape: tuple
    dtype: str
    requires_grad: bool
    is_view: bool = False
    shares_places: bool = False  # two elements read one storage place (expand, as_strided)

    @property
    def rank(self):
        return len(self.shape)

    @property
    def is_float(self):
        return self.dtype in FLOATS


@dataclass(frozen=True)
class Spec:
    name: str  # the family's name (reports name the call itself: generator.api_name)
    draw: object  # Draw -> (call, inputs) or (call, inputs, is a statement), or None: not now
    covers: tuple  # the public names it can call: "add", "Tensor.add_", "F.relu"
    weight: float = 1.0


SPECS = []


def spec(*covers, weight=1.0):
    """Add the decorated draw function to SPECS as an op named after it."""

    def register(draw):
        SPECS.append(Spec(draw.__name__, draw, covers or (draw.__name__,), weight))
        return draw

    return register


class Draw:
    """The choices a spec makes, all from one seeded random.Random."""

    def __init__(self, rng, pool):
        self.rng = rng
        self.pool = pool

    def wrong(self):
        """Break the op's rules this time?"""
        return self.rng.random() < WRONG_ON_PURPOSE

    def chance(self, probability):
        return self.rng.random() < probability

    def choice(self, options):
        return self.rng.choice(list(options))

    def value(self, floats=True, min_rank=0, max_rank=4, nonempty=False, own_places=False):
        """A value made so far with a rank the spec can build arguments for: a float one unless
        `floats` is False (or by mistake: then any dtype); with `own_places`, one whose elements
        each have a storage place of their own (not expanded)."""
        floats = floats and not self.wrong()
        fits = [
            v
            for v in self.pool
            if (v.is_float or not floats)
            and min_rank <= v.rank <= max_rank
            and (not nonempty or 0 not in v.shape)
            and not (own_places and v.shares_places)
        ]
        return self.choice(fits) if fits else None

    def partner(self, a, same_shape=False):
        """A second tensor for `a`: another value whose shape broadcasts with a's (or equals it)."""
        fits = [
            v
            for v in self.pool
            if (v.shape == a.shape if same_shape else broadcasts(v.shape, a.shape))
            and (v.is_float or self.chance(0.2))
        ]
        if self.wrong() or not fits:
            return self.choice(self.pool)
        return self.choice(fits)

    def dim(self, v):
        """A dim of v, negative half the time; a 0-d tensor has dims 0 and -1."""
        size = max(v.rank, 1)
        if self.wrong():
            return self.choice([size, -size - 1])
        return self.rng.randrange(-size, size)

    def dims(self, v):
        """None, one dim, a tuple of distinct dims, or () (which means every dim)."""
        roll = self.rng.random()
        if roll < 0.25:
            return None
        if roll < 0.6 or v.rank < 2:
            return self.dim(v)
        if roll < 0.7:
            return ()
        count = self.rng.randint(1, v.rank)
        chosen = self.rng.sample(range(v.rank), count)
        dims = tuple(d - v.rank if self.chance(0.5) else d for d in chosen)
        return dims + (dims[0],) if self.wrong() else dims

    def keepdim(self):
        return self.choice(["", ", keepdim=True", ", keepdim=False"])

    def number(self, kind="float"):
        """A Python scalar: ties, 0, ±1, a half, sometimes inf or NaN; or an int or a bool."""
        if kind == "int" or (kind == "float" and self.chance(0.2)):
            return str(self.choice([0, 1, -1, 2, 3, -2]))
        if kind == "bool" or self.chance(0.05):
            return self.choice(["True", "False"])
        if self.chance(0.05):
            return self.choice(["float('nan')", "float('inf')", "-float('inf')", "-0.0"])
        return repr(self.choice([0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 1.5, -2.5, 0.25]))

    def scalar_or_tensor(self, a):
        """What goes with tensor `a`: a Python number, a 0-d tensor, or a broadcastable value."""
        roll = self.rng.random()
        if roll < 0.3:
            return self.number(), ()
        if roll < 0.4:
            dtype = self.choice(["", ", dtype=torch.float64", ", dtype=torch.int64"])
            return f"torch.tensor({self.number()}{dtype})", ()
        return "{1}", (self.partner(a).name,)

    def literal(self, shape, dtype="float32", low=-2, high=2):
        """A tensor written out in the call (targets, index tensors, weights)."""
        count = int(np.prod(shape, dtype=int))
        if dtype == "int64":
            numbers = [str(self.rng.randint(low, high)) for _ in range(count)]
        elif dtype == "bool":
            numbers = [self.choice(["True", "False"]) for _ in range(count)]
        else:
            numbers = [repr(round(self.rng.uniform(low, high), 2)) for _ in range(count)]
        if not shape:  # a 0-d tensor
            return f"torch.tensor({numbers[0]}, dtype=torch.{dtype})"
        made = f"torch.tensor([{', '.join(numbers)}], dtype=torch.{dtype})"
        return made if len(shape) == 1 else f"{made}.reshape{tuple(shape)}"


def broadcasts(a, b):
    """Do shapes a and b broadcast together (PyTorch's rule: align right, sizes equal or 1)?"""
    return all(x == y or 1 in (x, y) for x, y in zip(reversed(a), reversed(b)))


def call(d, name, v, arguments="", method=True, function=True):
    """`torch.name(v, arguments)` or `v.name(arguments)`, whichever the op has (both: either)."""
    if method and (not function or d.chance(0.5)):
        return "{0}." + f"{name}({arguments.lstrip(', ')})", (v.name,)
    return f"torch.{name}({{0}}{arguments})", (v.name,)
