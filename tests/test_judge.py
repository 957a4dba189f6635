"""The judge's channel to a learner's worker (teach/wire.py, worker.py, judge.py), piece by piece:
what crosses as plain data, what stays a stand-in, and what a stand-in can and cannot do."""

import numpy as np
import pytest

from autograd_lab.teach import judge, wire

pytestmark = pytest.mark.slow  # each module fixture starts a worker (about 1 s)


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        -3,
        2.5,
        float("inf"),
        "ab",
        [1, [2.0, "x"]],
        (1, (2,)),
        {"a": 1, 2: (3,)},
        {1, 2},
        slice(1, None, 2),
        Ellipsis,
        np.arange(6.0).reshape(2, 3),
        np.float32(1.5),
        np.array(3),
    ],
)
def test_plain_data_crosses_as_itself(value):
    back = wire.decode(wire.encode(value, refer=None), resolve=None)
    if isinstance(value, np.ndarray):
        assert back.dtype == value.dtype and np.array_equal(back, value)
    else:
        assert back == value and type(back) is type(value)


def test_anything_else_is_not_plain_data():
    class Number(float):  # a subclass: its __eq__ could be anything
        pass

    for value in (Number(1.0), object(), np.array([object()]), [print]):
        with pytest.raises(wire.WireError, match="not plain data"):
            wire.encode(value, refer=None)


def test_free_names_follow_pythons_scopes():
    source = (
        "import math\n"
        "class W:\n"
        "    def __init__(self, loss_fn):\n"
        "        self.loss_fn = loss_fn\n"
        "def g(x):\n"
        "    return helper(x) + math.pi\n"
        "z = train(loss_fn, [k for k in ks])\n"
    )
    assert judge.free_names(source) == ["helper", "ks", "loss_fn", "train"]


@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    process = judge.WorkerProcess.start(tmp_path_factory.mktemp("work"), isolate=False)
    process.run(
        "import numpy as np\n"
        "import autograd_lab as torch\n"
        "class Liar:\n"
        "    def __eq__(self, other): return True\n"
        "    def __bool__(self): return True\n"
        "def liar(): return Liar()\n"
        "def fill(out): out[:] = 7\n"
        "def double(x): return 2 * x\n"
        "def call_it(f, *args): return f(*args)\n"
        "def read(obj): return obj.public\n"
        "def peek(obj): return obj._private\n"
    )
    yield process
    process.stop()


def _get(worker, name):
    return worker.request({"op": "get", "name": name})


def test_a_learners_function_is_called_with_plain_data_and_answers_it(worker):
    double = _get(worker, "double")
    assert double(21) == 42
    assert np.array_equal(double(np.arange(3.0)), [0.0, 2.0, 4.0])


def test_an_object_that_equals_everything_equals_only_itself_here(worker):
    liar = _get(worker, "liar")()
    assert isinstance(liar, judge.Remote)
    assert (liar == 5) is False and liar == liar and liar is not _get(worker, "liar")()


def test_a_tensor_is_a_stand_in_whose_value_is_compared_here(worker):
    torch = _get(worker, "torch")
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    assert np.array_equal(x.grad, [2.0, 4.0]) and float(x.grad.sum()) == 6.0
    assert x.grad_fn is None and x.is_leaf is True
    node = (x * 3).grad_fn
    assert node.name() == "MulBackward0" and node.next_functions[0][0].variable is x


def test_arrays_written_by_the_learners_function_are_written_back(worker):
    out = np.zeros(3)
    _get(worker, "fill")(out)
    assert np.array_equal(out, [7.0, 7.0, 7.0])


def test_a_callback_runs_here_and_shows_only_its_public_side(worker):
    class Spy:
        public = 11
        _private = "secret"

    assert _get(worker, "call_it")(lambda a, b: a * b, 6, 7) == 42
    assert _get(worker, "read")(Spy()) == 11
    with pytest.raises(AttributeError):
        _get(worker, "peek")(Spy())


def test_a_name_the_notebook_lacks_is_a_name_error(worker):
    with pytest.raises(NameError, match="not_there"):
        _get(worker, "not_there")


def test_check_cells_share_names_and_take_helpers_from_the_grader(worker):
    cells = judge.CheckCells(worker)
    worker.run("check = lambda *a, **k: print('forged')")  # the learner's rebinding
    cells.run("def twice(x):\n    return double(x) == 2 * x")
    with pytest.raises(AssertionError, match="✗ ex9"):  # the grader's own check() decides
        cells.run("check('ex9', lambda: not twice(3))")
    cells.run("check('ex9', lambda: twice(3))")
