"""autograd_lab.save / load, as torch.save / torch.load: round trips, safety, and PyTorch's files.

Tests that take `lib` run with both libraries: what they check is PyTorch's behaviour. Files
written by torch.save are read by autograd_lab.load in the last part.
"""

import io
import pickle
import zipfile
from collections import Counter, OrderedDict

import numpy as np
import pytest
from conftest import to_numpy

import autograd_lab as ag

DTYPES = ["float16", "float32", "float64", "int32", "int64", "uint8", "bool"]


def round_trip(lib, obj, **load_options):
    buffer = io.BytesIO()
    lib.save(obj, buffer)
    buffer.seek(0)
    return lib.load(buffer, **load_options)


# ---- tensors ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3)])
def test_a_tensor_keeps_values_dtype_and_shape(lib, dtype, shape):
    values = (np.arange(int(np.prod(shape))) % 3).reshape(shape)
    tensor = lib.tensor(values.tolist() if shape else values.item(), dtype=getattr(lib, dtype))
    loaded = round_trip(lib, tensor)
    assert loaded.dtype == tensor.dtype and loaded.shape == tensor.shape
    np.testing.assert_array_equal(to_numpy(loaded), to_numpy(tensor))
    assert not loaded.requires_grad and loaded.is_leaf


def test_requires_grad_is_kept_and_the_graph_and_grad_are_not(lib):
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    w.grad = lib.ones(2)
    y = w * 2  # from the middle of a graph
    loaded = round_trip(lib, {"w": w, "y": y})
    for t in loaded.values():
        assert t.requires_grad and t.is_leaf and t.grad_fn is None and t.grad is None
    assert loaded["y"].tolist() == [2.0, 4.0]
    (loaded["y"] * 3).sum().backward()  # a leaf again: its own gradient
    assert loaded["y"].grad.tolist() == [3.0, 3.0]


def test_a_parameter_loads_as_a_parameter(lib):
    p = lib.nn.Parameter(lib.ones(2))
    frozen = lib.nn.Parameter(lib.zeros(1), requires_grad=False)
    loaded = round_trip(lib, [p, frozen])
    assert [type(t).__name__ for t in loaded] == ["Parameter", "Parameter"]
    assert loaded[0].requires_grad and not loaded[1].requires_grad


def test_the_same_tensor_twice_loads_as_one_tensor(lib):
    t = lib.arange(3)
    loaded = round_trip(lib, {"a": t, "b": [t, t]})
    assert loaded["a"] is loaded["b"][0] is loaded["b"][1]


def test_views_load_as_independent_tensors():
    """Documented difference: PyTorch keeps a view sharing its base's storage after loading."""
    base = ag.arange(6.0)
    loaded = round_trip(ag, {"base": base, "view": base[2:4]})
    loaded["base"][2] = 100.0
    assert loaded["view"].tolist() == [2.0, 3.0]


def test_containers_and_plain_values(lib):
    obj = {
        "list": [1, 2.5, "three", None, True],
        "tuple": (1, (2, 3)),
        "ordered": OrderedDict([("b", 1), ("a", 2)]),
        "set": {1, 2},
        "counter": Counter("abca"),
        "complex": 1 + 2j,
        "bytes": b"\x00\xff",
        "inf": float("inf"),
        "size": lib.Size([2, 3]),
        "dtype": lib.float64,
        "device": lib.device("cpu"),
    }
    loaded = round_trip(lib, obj)
    assert loaded == obj
    assert type(loaded["ordered"]) is OrderedDict and list(loaded["ordered"]) == ["b", "a"]
    assert type(loaded["size"]) is type(obj["size"]) and loaded["dtype"] is lib.float64


def test_other_python_objects_are_refused(lib):
    """PyTorch's weights-only list has no frozenset (nor slice, range...): neither has ours."""
    for value in (frozenset({1}), slice(1, 2), range(3)):
        with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
            round_trip(lib, [value])


def test_paths_and_file_objects(lib, tmp_path):
    t = lib.tensor([1.0, 2.0])
    lib.save(t, tmp_path / "t.pt")  # a pathlib.Path
    lib.save(t, str(tmp_path / "s.pt"))  # a string
    with open(tmp_path / "f.pt", "wb") as f:
        lib.save(t, f)
    for name in ("t.pt", "s.pt", "f.pt"):
        assert lib.load(tmp_path / name).tolist() == [1.0, 2.0]
    with open(tmp_path / "f.pt", "rb") as f:
        assert lib.load(f).tolist() == [1.0, 2.0]


# ---- models, optimizers, schedulers ------------------------------------------------------------
def mlp(lib):
    lib.manual_seed(3)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))


def test_model_state_dict_round_trip(tmp_path):
    model = mlp(ag)
    ag.save(model.state_dict(), tmp_path / "model.pt")
    other = ag.nn.Sequential(ag.nn.Linear(3, 4), ag.nn.Tanh(), ag.nn.Linear(4, 2))
    loaded = ag.load(tmp_path / "model.pt")
    assert type(loaded) is OrderedDict and list(loaded) == list(model.state_dict())
    assert repr(other.load_state_dict(loaded)) == "<All keys matched successfully>"
    x = ag.randn(5, 3)
    np.testing.assert_array_equal(other(x).detach().numpy(), model(x).detach().numpy())


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad"])
def test_a_checkpoint_resumes_training_exactly(tmp_path, name):
    """Save model + optimizer + scheduler after 3 steps; the loaded copies go on identically."""
    x, y = ag.randn(8, 3), ag.randn(8, 2)

    def make():
        model = mlp(ag)
        optimizer = getattr(ag.optim, name)(model.parameters(), lr=0.05)
        scheduler = ag.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
        return model, optimizer, scheduler

    def train(model, optimizer, scheduler, steps):
        for _ in range(steps):
            optimizer.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            optimizer.step()
            scheduler.step()

    model, optimizer, scheduler = make()
    train(model, optimizer, scheduler, 3)
    checkpoint = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "epoch": 3,
    }
    ag.save(checkpoint, tmp_path / "checkpoint.pt")
    train(model, optimizer, scheduler, 4)

    resumed = make()
    loaded = ag.load(tmp_path / "checkpoint.pt")
    resumed[0].load_state_dict(loaded["model"])
    resumed[1].load_state_dict(loaded["optimizer"])
    resumed[2].load_state_dict(loaded["scheduler"])
    assert loaded["epoch"] == 3
    train(*resumed, 4)
    for a, b in zip(resumed[0].parameters(), model.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert resumed[2].get_last_lr() == scheduler.get_last_lr()


def test_optimizer_state_keeps_torchs_types(lib):
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    optimizer = lib.optim.Adam([w], lr=0.1, betas=(0.8, 0.9))
    w.grad = lib.ones(2)
    optimizer.step()
    loaded = round_trip(lib, optimizer.state_dict())
    assert loaded["param_groups"][0]["betas"] == (0.8, 0.9)
    step = loaded["state"][0]["step"]
    assert step.dtype == lib.float32 and step.item() == 1.0
    assert loaded["state"][0]["exp_avg"].dtype == lib.float32


# ---- safety ------------------------------------------------------------------------------------
RAN = []


def record_that_code_ran(*args):
    RAN.append(args)


class Payload:
    """An object whose unpickling calls a function: what a malicious file would do."""

    def __reduce__(self):
        return (record_that_code_ran, ("payload",))


def test_weights_only_never_runs_code_from_the_file(lib, tmp_path):
    RAN.clear()
    lib.save({"weights": lib.ones(2), "surprise": Payload()}, tmp_path / "evil.pt")
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        lib.load(tmp_path / "evil.pt")  # weights_only=True is the default
    with pytest.raises(pickle.UnpicklingError, match="record_that_code_ran"):
        lib.load(tmp_path / "evil.pt", weights_only=True)
    assert RAN == []
    loaded = lib.load(tmp_path / "evil.pt", weights_only=False)  # the guard was what stopped it
    assert RAN == [("payload",)] and loaded["surprise"] is None


def test_a_hand_made_pickle_calling_os_system_is_refused(tmp_path):
    """A data.pkl written by hand, as an attacker would: `os.system('touch <marker>')`."""
    marker = tmp_path / "pwned"
    command = f"touch {marker}".encode()
    evil = b"\x80\x02cos\nsystem\nq\x00X" + len(command).to_bytes(4, "little") + command
    evil += b"\x85R."  # TUPLE1, REDUCE, STOP
    with zipfile.ZipFile(tmp_path / "evil.pt", "w") as archive:
        archive.writestr("autograd_lab/version", "1\n")
        archive.writestr("autograd_lab/data.pkl", evil)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL os.system"):
        ag.load(tmp_path / "evil.pt")
    assert not marker.exists()


def test_tensor_entries_are_read_without_pickle(tmp_path):
    """A .npy entry holding pickled objects is refused by numpy (allow_pickle=False)."""
    buffer = io.BytesIO()
    np.save(buffer, np.array([Payload()], dtype=object), allow_pickle=True)
    ag.save(ag.ones(1), tmp_path / "t.pt")
    with zipfile.ZipFile(tmp_path / "t.pt") as original:
        entries = {name: original.read(name) for name in original.namelist()}
    entries["autograd_lab/tensors/0.npy"] = buffer.getvalue()
    with zipfile.ZipFile(tmp_path / "evil.pt", "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    RAN.clear()
    with pytest.raises(ValueError, match="allow_pickle"):
        ag.load(tmp_path / "evil.pt", weights_only=False)
    assert RAN == []


def test_a_whole_model_needs_weights_only_false():
    model = mlp(ag)
    with pytest.raises(pickle.UnpicklingError, match="weights_only=False") as error:
        round_trip(ag, model)
    assert "model.state_dict()" in str(error.value)
    loaded = round_trip(ag, model, weights_only=False)  # a trusted file: the module itself
    x = ag.randn(2, 3)
    np.testing.assert_array_equal(loaded(x).detach().numpy(), model(x).detach().numpy())


# ---- devices -----------------------------------------------------------------------------------
def test_map_location_cpu_and_dict():
    t = ag.tensor([1.0, 2.0])
    assert round_trip(ag, t, map_location="cpu").device == ag.device("cpu")
    assert round_trip(ag, t, map_location=ag.device("cpu")).device == ag.device("cpu")
    assert round_trip(ag, t, map_location={"cuda:0": "cpu"}).device == ag.device("cpu")


def test_map_location_as_pytorchs_old_function_idioms(lib, tmp_path):
    lib.save(lib.ones(2), tmp_path / "t.pt")
    for function in (lambda storage, loc: storage, lambda storage, loc: None):
        loaded = lib.load(tmp_path / "t.pt", map_location=function)
        assert loaded.device == lib.device("cpu") and loaded.tolist() == [1.0, 1.0]


@pytest.mark.skipif(not ag.cuda.is_available(), reason="CUDA is not available")
def test_cuda_tensors_load_on_cuda_or_where_map_location_says():
    t = ag.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    same = round_trip(ag, t)
    assert same.device == t.device and same.requires_grad and same.cpu().tolist() == [1.0, 2.0]
    for where in ("cpu", {"cuda:0": "cpu"}, lambda storage, loc: storage):
        moved = round_trip(ag, t, map_location=where)
        assert moved.device == ag.device("cpu") and moved.tolist() == [1.0, 2.0]
    assert round_trip(ag, ag.ones(1), map_location="cuda").device == t.device
    to_gpu = round_trip(ag, ag.ones(1), map_location=lambda storage, loc: storage.cuda())
    assert to_gpu.device == t.device


# ---- errors ------------------------------------------------------------------------------------
def test_files_that_are_not_archives(tmp_path):
    (tmp_path / "plain.pkl").write_bytes(pickle.dumps([1, 2], protocol=2))
    with pytest.raises(pickle.UnpicklingError, match="legacy format"):
        ag.load(tmp_path / "plain.pkl")
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(pickle.UnpicklingError, match="not written by autograd_lab.save"):
        ag.load(tmp_path / "notes.txt")
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as archive:
        archive.writestr("readme.txt", "hi")
    with pytest.raises(pickle.UnpicklingError, match="no data.pkl"):
        ag.load(tmp_path / "other.zip")


def test_unsupported_arguments_say_so(tmp_path):
    ag.save(ag.ones(1), tmp_path / "t.pt")
    with pytest.raises(TypeError, match="map_location returned int"):
        ag.load(tmp_path / "t.pt", map_location=lambda storage, location: 0)
    with pytest.raises(ValueError, match="mmap=True"):
        ag.load(tmp_path / "t.pt", mmap=True)
    with pytest.raises(ValueError, match="pickle_module"):
        ag.save(ag.ones(1), tmp_path / "u.pt", pickle_module=zipfile)
    with open(tmp_path / "t.pt") as text, pytest.raises(TypeError, match="text mode"):
        ag.load(text)


# ---- files written by PyTorch ------------------------------------------------------------------
def torch_file(torch, obj, tmp_path, **options):
    path = tmp_path / "from_torch.pt"
    torch.save(obj, path, **options)
    return path


@pytest.mark.parametrize("dtype", DTYPES)
def test_pytorch_tensors_of_every_dtype(torch, tmp_path, dtype):
    t = (torch.arange(12) % 3).to(getattr(torch, dtype)).reshape(3, 4)
    obj = {"t": t, "transposed": t.t(), "window": t[1:, 2:], "scalar": t[0, 1]}
    loaded = ag.load(torch_file(torch, obj, tmp_path))
    for key, original in obj.items():
        assert str(loaded[key].dtype) == str(original.dtype)  # both print torch.float32
        assert tuple(loaded[key].shape) == tuple(original.shape)
        np.testing.assert_array_equal(loaded[key].numpy(), original.numpy())


def test_a_pytorch_state_dict_loads_into_our_model(torch, tmp_path):
    theirs = mlp(torch)
    loaded = ag.load(torch_file(torch, theirs.state_dict(), tmp_path))
    ours = ag.nn.Sequential(ag.nn.Linear(3, 4), ag.nn.Tanh(), ag.nn.Linear(4, 2))
    assert repr(ours.load_state_dict(loaded)) == "<All keys matched successfully>"
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(
        ours(ag.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(), rtol=1e-6
    )


def test_pytorch_values_flags_and_plain_values(torch, tmp_path):
    obj = {
        "param": torch.nn.Parameter(torch.ones(2)),
        "leaf": torch.tensor([1.0], requires_grad=True),
        "size": torch.Size([2, 3]),
        "dtype": torch.float64,
        "device": torch.device("cpu"),
        "numbers": [1, 2.5, (3, "x"), {4}],
    }
    loaded = ag.load(torch_file(torch, obj, tmp_path), map_location="cpu")
    assert type(loaded["param"]) is ag.nn.Parameter and loaded["param"].requires_grad
    assert loaded["leaf"].requires_grad and loaded["leaf"].is_leaf
    assert loaded["size"] == ag.Size([2, 3]) and loaded["dtype"] is ag.float64
    assert loaded["device"] == ag.device("cpu") and loaded["numbers"] == [1, 2.5, (3, "x"), {4}]


def test_a_pytorch_optimizer_state_continues_here(torch, tmp_path):
    """Adam trained 3 steps in PyTorch, resumed in autograd_lab: the same parameters as PyTorch."""
    start = np.array([1.0, -2.0, 0.5])
    w = torch.tensor(start, requires_grad=True)
    optimizer = torch.optim.Adam([w], lr=0.1)

    def loss(lib, p):
        return ((p - 0.3) ** 2).sum() + (p**3).sum().tanh()

    for _ in range(3):
        optimizer.zero_grad()
        loss(torch, w).backward()
        optimizer.step()
    path = torch_file(torch, {"w": w.detach(), "optimizer": optimizer.state_dict()}, tmp_path)
    loaded = ag.load(path)
    ours = loaded["w"].requires_grad_()
    our_optimizer = ag.optim.Adam([ours], lr=0.5)
    our_optimizer.load_state_dict(loaded["optimizer"])
    for lib, p, opt in [(torch, w, optimizer), (ag, ours, our_optimizer)]:
        for _ in range(3):
            opt.zero_grad()
            loss(lib, p).backward()
            opt.step()
    np.testing.assert_allclose(ours.detach().numpy(), w.detach().numpy(), rtol=1e-12)


def test_pytorch_files_autograd_lab_cannot_rebuild(torch, tmp_path):
    with pytest.raises(pickle.UnpicklingError, match="bfloat16"):
        ag.load(torch_file(torch, torch.ones(2, dtype=torch.bfloat16), tmp_path))
    RAN.clear()
    whole_model = torch_file(torch, torch.nn.Linear(2, 1), tmp_path)
    with pytest.raises(pickle.UnpicklingError, match=r"torch\.nn\.modules\.linear\.Linear"):
        ag.load(whole_model, weights_only=False)  # PyTorch's classes are never built here
    with pytest.raises(pickle.UnpicklingError, match="record_that_code_ran"):
        ag.load(torch_file(torch, [Payload()], tmp_path), weights_only=False)
    assert RAN == []
    legacy = torch_file(torch, torch.ones(2), tmp_path, _use_new_zipfile_serialization=False)
    with pytest.raises(pickle.UnpicklingError, match="legacy format"):
        ag.load(legacy)
