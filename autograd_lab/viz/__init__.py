"""Seeing the graph: a snapshot of it as data, and the viewers that draw it.

from autograd_lab.viz import trace, snapshot
with trace() as t:
    loss = ...; loss.backward()
t.graph()        # nodes, edges and the backward pass in the engine's order
"""

from .graph import LOCAL_DERIVATIVES, Graph, Trace, snapshot, summarize, trace

__all__ = ["LOCAL_DERIVATIVES", "Graph", "Trace", "snapshot", "summarize", "trace"]
