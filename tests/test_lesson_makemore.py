"""Lesson 10 (notebooks/10_makemore.ipynb) says its code is PyTorch code: run with real PyTorch,
every cell prints what it prints with autograd_lab, the data-dependent numbers and the sampled
names included. This test runs the lesson's code cells as one script both ways and compares the
outputs with the script corpus's rules (tests/test_script_corpus.py)."""

import json

import pytest
from test_script_corpus import ROOT, SWITCHED, differences, finish, start

LESSON = ROOT / "notebooks" / "10_makemore.ipynb"


def lesson_as_script():
    """The code cells, without the magics (%load_ext, %%autograd): what a learner's script holds.
    A %%autograd cell's last line (the loss it shows) becomes a print, so it is compared too."""
    cells = []
    for cell in json.loads(LESSON.read_text())["cells"]:
        if cell["cell_type"] != "code":
            continue
        lines = "".join(cell["source"]).splitlines()
        if lines and lines[0].startswith("%%autograd"):
            lines = lines[1:-1] + [f"print({lines[-1]})"]
        cells.append("\n".join(line for line in lines if not line.startswith("%")))
    script = "\n\n".join(cells).replace("plt.show()", "plt.close('all')")
    script = script.replace("import autograd_lab as torch\n", "import torch\n")
    script = script.replace(
        "import autograd_lab.nn.functional as F\n", "import torch.nn.functional as F\n"
    )
    return "import matplotlib\n\nmatplotlib.use('Agg')\n" + script


@pytest.mark.oracle
@pytest.mark.slow
def test_the_lesson_prints_what_pytorch_prints(torch, tmp_path):
    script = tmp_path / "makemore_lesson.py"
    script.write_text(lesson_as_script())
    assert (
        "import torch\n" in script.read_text() and "autograd_lab as torch" not in script.read_text()
    )
    theirs_process = start([str(script)], tmp_path)
    ours_process = start(["-c", SWITCHED, str(script)], tmp_path)
    code, theirs, their_errors = finish(theirs_process, seconds=600)
    assert code == 0, their_errors
    code, ours, our_errors = finish(ours_process, seconds=600)
    assert code == 0, our_errors
    assert "tensor([0.7081, 0.3542, 0.1054])" in theirs  # the lecture's first random numbers
    assert differences(ours, theirs, rtol=0, atol=0) == ""  # within one unit of the last digit
