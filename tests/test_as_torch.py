"""`autograd_lab.as_torch()`: after it, `import torch` (in every form) gives autograd_lab.

Each test runs its code in a fresh Python process: the switch changes what the name `torch` means
for the whole process, and this test process keeps the real PyTorch as its oracle.
"""

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run(code, expect_failure=False):
    """Run `code` in a new Python process started in the repository; return what it printed."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if expect_failure:
        assert done.returncode != 0, done.stdout
        return done.stderr
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_import_form_gives_autograd_lab():
    printed = run(
        """
        import autograd_lab
        autograd_lab.as_torch()
        import torch
        import torch.nn as nn
        from torch import nn as nn2, optim
        import torch.nn.functional as F
        import torch.optim
        import torch.utils.data
        from torch.utils.data import DataLoader, TensorDataset
        import torch.autograd
        import torch.random
        import torch.linalg
        from torch.linalg import vector_norm
        from torch.autograd.functional import jacobian
        from torch.optim.lr_scheduler import StepLR
        from torch.nn.utils import clip_grad_norm_
        import sys
        assert torch is autograd_lab
        assert nn is nn2 is autograd_lab.nn and optim is autograd_lab.optim
        assert F is autograd_lab.nn.functional and torch.optim is autograd_lab.optim
        assert DataLoader is autograd_lab.data.DataLoader
        assert TensorDataset is autograd_lab.data.TensorDataset
        assert torch.utils.data is autograd_lab.utils.data
        assert torch.autograd is autograd_lab.autograd and torch.random is autograd_lab.random
        assert sys.modules["torch.nn.functional"] is autograd_lab.nn.functional
        assert torch.linalg is autograd_lab.linalg and vector_norm is autograd_lab.linalg.vector_norm
        assert jacobian is autograd_lab.autograd.functional.jacobian
        assert StepLR is autograd_lab.optim.lr_scheduler.StepLR
        assert clip_grad_norm_ is autograd_lab.nn.utils.clip_grad_norm_
        # autograd_lab's modules still say where they come from
        assert autograd_lab.__spec__.name == "autograd_lab"
        assert F.__spec__.name == "autograd_lab.nn.functional"
        print(torch.tensor([1.0, 2.0]) * 2, type(nn.Linear(2, 1)).__module__)
        """
    )
    assert printed == "tensor([2., 4.]) autograd_lab.nn.modules\n"


@pytest.mark.oracle  # the real PyTorch is imported too
def test_undo_brings_back_pytorch(torch):
    printed = run(
        """
        import sys
        import autograd_lab
        switch = autograd_lab.as_torch()
        import torch.nn
        assert torch is autograd_lab and switch.active
        switch.undo()
        assert not switch.active
        assert not [name for name in sys.modules if name.split(".")[0] == "torch"]
        import torch
        print(torch is autograd_lab, torch.__name__, autograd_lab.nn.__name__)
        """
    )
    assert printed == "False torch autograd_lab.nn\n"


@pytest.mark.oracle  # the real PyTorch is imported too
def test_as_torch_false_undoes_and_the_switch_is_a_context_manager(torch):
    printed = run(
        """
        import autograd_lab
        autograd_lab.as_torch()
        import torch
        print(torch is autograd_lab)
        autograd_lab.as_torch(False)
        with autograd_lab.as_torch() as switch:
            import torch.nn.functional as F
            print(F is autograd_lab.nn.functional, switch.active)
        print(switch.active)
        import torch.nn.functional as F
        print(F is autograd_lab.nn.functional, F.__name__)
        """
    )
    assert printed == "True\nTrue True\nFalse\nFalse torch.nn.functional\n"


def test_turning_it_on_twice_is_harmless():
    printed = run(
        """
        import sys
        import autograd_lab
        autograd_lab.as_torch()
        autograd_lab.as_torch()
        import torch
        print(torch is autograd_lab, sum(type(f).__name__ == "TorchToAutogradLab"
                                         for f in sys.meta_path))
        """
    )
    assert printed == "True 1\n"


def test_a_module_kept_as_an_attribute_is_found_too():
    printed = run(
        """
        import types
        import autograd_lab
        autograd_lab.linalg_like = types.ModuleType("autograd_lab.linalg_like")
        autograd_lab.linalg_like.norm = "the norm"
        autograd_lab.as_torch()
        import torch.linalg_like
        from torch.linalg_like import norm
        print(torch.linalg_like is autograd_lab.linalg_like, norm)
        """
    )
    assert printed == "True the norm\n"


def test_a_submodule_of_a_plain_module_is_named():
    message = run(
        """
        import autograd_lab
        autograd_lab.as_torch()
        import torch.random.nothing
        """,
        expect_failure=True,
    )
    # Python's own words, before any finder is asked (PyTorch's torch.random says the same)
    assert "No module named 'torch.random.nothing'; 'torch.random' is not a package" in message


@pytest.mark.oracle  # the real PyTorch is imported too
def test_after_real_torch_was_imported_it_says_to_restart(torch):
    message = run(
        """
        import torch
        import autograd_lab
        autograd_lab.as_torch()
        """,
        expect_failure=True,
    )
    assert "RuntimeError" in message
    assert "already imported" in message and "Restart the kernel" in message
    assert "before anything imports torch" in message


def test_a_submodule_autograd_lab_lacks_is_named():
    message = run(
        """
        import autograd_lab
        autograd_lab.as_torch()
        import torch.distributions
        """,
        expect_failure=True,
    )
    assert "ModuleNotFoundError: No module named 'torch.distributions'" in message
    assert "autograd_lab does not provide 'autograd_lab.distributions'" in message


def test_from_torch_import_a_missing_submodule_names_autograd_lab():
    message = run(
        """
        import autograd_lab
        autograd_lab.as_torch()
        from torch import distributions
        """,
        expect_failure=True,
    )
    assert "ImportError: cannot import name 'distributions' from 'autograd_lab'" in message


def test_other_imports_are_untouched():
    printed = run(
        """
        import autograd_lab
        autograd_lab.as_torch()
        import torchlike_name_that_does_not_exist
        """,
        expect_failure=True,
    )
    assert "No module named 'torchlike_name_that_does_not_exist'" in printed
    assert "autograd_lab" not in printed


@pytest.mark.oracle  # the real PyTorch is imported too
@pytest.mark.skipif(importlib.util.find_spec("IPython") is None, reason="IPython is not installed")
def test_the_autograd_torch_magic(torch):
    printed = run(
        """
        from IPython.core.interactiveshell import InteractiveShell
        from IPython.utils.capture import capture_output
        from traitlets.config import Config
        config = Config()
        config.HistoryManager.enabled = False
        shell = InteractiveShell.instance(config=config)
        def cell(code):
            with capture_output() as captured:
                result = shell.run_cell(code)
            print(captured.stdout.strip())
            return result
        cell("%load_ext autograd_lab")
        cell("%autograd_torch")
        cell("import torch, autograd_lab; print(torch is autograd_lab)")
        cell("%autograd_torch off")
        cell("import torch; print(torch is autograd_lab)")
        bad = cell("%autograd_torch sideways")
        print(type(bad.error_in_exec).__name__, bad.error_in_exec)
        """
    )
    assert printed.splitlines() == [
        "",
        "`import torch` now imports autograd_lab (undo: %autograd_torch off)",
        "True",
        "`import torch` imports PyTorch again",
        "False",
        "",
        "UsageError %autograd_torch takes nothing, 'on' or 'off'; got 'sideways'",
    ]
