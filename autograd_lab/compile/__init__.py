"""autograd_lab.compile: trace a function into a graph, fuse its elementwise chains into numba
kernels, and replay the plan on new inputs. The pipeline, one concept per file, in the order a
compiled function runs it (lesson 09 follows it):

    trace.py    trace(fn, *inputs) -> Graph: what fn computed, call by call
    ir.py       Value, Call, Graph: the traced program as plain data
    fuse.py     find_groups / plan: groups of elementwise calls, each replaced by one Fused call
    rules.py    what each call computes for one element, and its local derivatives (from the
                op's record: its kernel, and its own backward, traced)
    codegen.py  a group as Python source: forward and backward numba kernels
    kernel.py   FusedKernel: runs a group's kernels on numpy arrays or CUDA arrays
    run.py      run(graph, inputs, plan=None): replay call by call through autograd
    api.py      compile(fn) -> CompiledFunction: a cache of traces; fuse(graph) -> Plan

Beyond the lesson's path, in extras/ (its README says what each adds and what it buys): the
vectorizable float32 exp and tanh that CPU kernels call, row-wise fusion (reductions over the last
axis with their neighbours), the memory planner and its timeline, recycled output arrays, and
parallel execution.
"""

from .api import CompiledFunction, compile, fuse
from .extras.memory import measure_peak, plan_memory, record_memory
from .extras.parallel import run_parallel
from .fuse import Elementwise, Fused, Plan, find_groups
from .ir import Call, Graph, Value
from .run import run
from .trace import TracerWarning, trace

__all__ = [
    "Call",
    "CompiledFunction",
    "Elementwise",
    "Fused",
    "Graph",
    "Plan",
    "TracerWarning",
    "Value",
    "compile",
    "find_groups",
    "fuse",
    "measure_peak",
    "plan_memory",
    "record_memory",
    "run",
    "run_parallel",
    "trace",
]
