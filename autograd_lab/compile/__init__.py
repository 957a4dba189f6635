"""autograd_lab.compile: trace a function into a graph, fuse its elementwise chains into numba
kernels, and replay the plan on new inputs.

    ir.py       Value, Call, Graph: the traced program as plain data
    trace.py    trace(fn, *inputs) -> Graph
    run.py      run(graph, inputs, plan=None): replay call by call through autograd
    fuse.py     fuse(graph) -> Plan: elementwise groups replaced by Fused calls
    rules.py    each elementwise op's scalar expression and local derivatives
    codegen.py  a group as Python source: forward and backward numba kernels
    kernel.py   FusedKernel: runs a group's kernels on numpy arrays or CUDA arrays
    rowwise.py  row-wise groups: reductions over the last axis with their elementwise neighbours
    rowprogram.py, rowcode.py, rowgrad.py, rowkernel.py  their program, kernels and Function
    kernel_math.py  float32 exp/tanh the generated CPU kernels call; recycle.py  output arrays
    api.py      compile(fn) -> CompiledFunction: a cache of traces, .graph, .plan, .kernels
"""

from .api import CompiledFunction, compile
from .fuse import Fused, Plan, find_groups, fuse
from .ir import Call, Graph, Value
from .run import run
from .trace import TracerWarning, trace

__all__ = [
    "Call",
    "CompiledFunction",
    "compile",
    "Fused",
    "Graph",
    "Plan",
    "TracerWarning",
    "Value",
    "find_groups",
    "fuse",
    "run",
    "trace",
]
