"""Write a program as Python source that runs with `import torch` and `import autograd_lab as torch`.

    # fuzzer seed 42: autograd_lab differs from PyTorch 2.13 (values of v1)
    import torch  # the same lines run with: import autograd_lab as torch

    nan, inf = float('nan'), float('inf')
    x0 = torch.tensor([1.0, 2.0], dtype=torch.float32).requires_grad_()
    v1 = x0.narrow(0, -1, 1)
    print("v1:", repr(v1))  # ours : tensor([1.], ...)   torch: tensor([2.], ...)

A line that raises in either library (check.Result.raising) is wrapped in try/except and prints
the exception's class, so the whole program runs to its end in both.
"""

from .program import statements


def reproducer(program, divergences=(), raising=()):
    """The source of `program`, printing what `divergences` (compare.Divergence) are about;
    `raising`: the numbers of the lines that raise in either library."""
    lines = statements(program)
    about = ", ".join(sorted({_about(d, lines) for d in divergences}))
    seed = f"fuzzer seed {program.seed}: " if program.seed is not None else ""
    out = [
        f"# {seed}autograd_lab differs from PyTorch 2.13 ({about or 'no divergence given'})",
        "import torch  # the same lines run with: import autograd_lab as torch",
        "",
    ]
    for number, line in enumerate(lines):
        here = [d for d in divergences if d.line == number]
        raises = number in raising or any(d.expression == "" for d in here)
        if raises:
            out.append("try:")
            out += ["    " + text for text in line.source.splitlines()]
            out.append("except Exception as error:")
            out.append(f"    print({line.label!r}, 'raises', type(error).__name__, error)")
            for divergence in [d for d in here if d.expression == ""][:1]:
                out.append(f"# ours : {_one_line(divergence.ours)}")
                out.append(f"# torch: {_one_line(divergence.theirs)}")
        else:
            out += line.source.splitlines()
        for expression in sorted({d.expression for d in here if d.expression}):
            show = expression.split("[")[0] if expression.startswith("grads") else expression
            mine = [d for d in here if d.expression == expression][0]
            out.append(f"print({show + ':'!r}, repr({show}))")
            out.append(f"# ours : {_one_line(mine.ours)}")
            out.append(f"# torch: {_one_line(mine.theirs)}")
    return "\n".join(out) + "\n"


def _one_line(text):
    return " ".join(text.split())[:200]


def _about(divergence, lines):
    if divergence.expression == "":
        return f"{lines[divergence.line].label}: {divergence.what}"
    return f"{divergence.what} of {divergence.expression}"
