"""autograd_lab.compile: trace a function into a graph, fuse its elementwise chains into numba
kernels, and replay the plan on new inputs.

    ir.py       Value, Call, Graph: the traced program as plain data
    trace.py    trace(fn, *inputs) -> Graph
    run.py      run(graph, inputs, plan=None): replay call by call through autograd
"""

from .ir import Call, Graph, Value
from .run import run
from .trace import TracerWarning, trace

__all__ = ["Call", "Graph", "TracerWarning", "Value", "run", "trace"]
