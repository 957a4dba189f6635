"""Linear layers and ReLU run by the planned executor itself, in buffers the plan chooses.

    >>> import autograd_lab as ag
    >>> from autograd_lab.compile import trace
    >>> model = ag.nn.Sequential(ag.nn.Linear(8, 4), ag.nn.ReLU(), ag.nn.Linear(4, 3))
    >>> x = ag.randn(2, 8)
    >>> graph = trace(lambda x: model(x).sum(), x)
    >>> layer_steps(graph, [x], routed=set())  # {call index: step}
    {0: linear %3 (weight gradient hosts %3 and its gradient), 1: relu %4 (in place), 2: linear %7}

Where does a training step of an MLP peak? At the end of backward, when the first layer's weight
gradient is made: every weight gradient is alive then (they are what the step returns), and so is
the gradient flowing into that layer, which the product `grad.T @ input` reads. The results of
the step cannot be made smaller, but that incoming gradient need not take memory of its own:

1. A weight's gradient buffer is written only when its layer's backward runs, last of all for
   the first layer. Until then that memory is idle, so the plan allocates it when the layer's
   forward runs and keeps in it the layer's output (at the front; its ReLU runs in place), and
   later the gradient that flows back into that output (at the back): the next layer's backward
   writes it there (`out=`) and ReLU's backward masks it in place.

       W1's gradient buffer, 512 x 784:  [ relu(x @ W1.T + b1) |  idle  | gradient into it ]
                                           256 x 512 (forward)            256 x 512 (backward)

   Both fit when batch <= in_features / 2; otherwise the layer keeps plain arrays.
2. Row j of the weight gradient `grad.T @ input` reads only column j of `grad`. So the buffer is
   filled from the front while `grad` still sits at its back: the rows that end before `grad`
   begins are computed straight from it; the columns that the rows lying over `grad` need are
   first copied into the (idle) memory of the first rows, which are written last, the same way.

The price: a forward under grad mode holds the weight gradients' memory from the start, which
pays off only if backward follows (under `no_grad` none of this runs).

3. When the optimizer's step runs inside backward (a post-accumulate hook on the weight, see
   `Tensor.register_post_accumulate_grad_hook`), each weight gradient is dropped right after it
   is written, so the gradients are never all alive together, and a buffer made in forward is
   idle memory no longer: it sits under the backward of every later layer. Then a layer hosts
   only when no later layer does: one buffer, the one that sits under the least. (Measured on
   the 784-512-512-10 step: hosting in both layers 2.73 MB, in the first only 3.19 MB, in the
   second only 2.17 MB, in neither 2.63 MB. On 784-512-10, 784-1024-256-10 and
   784-512-512-512-512-10 too, no other choice of hosting layers peaked lower.)

Every number comes from the same numpy calls as the ops (`Addmm`, `LinearMm`, `Relu`) make in
eager mode, so gradients are bit-identical; only the weight gradient is computed in row blocks,
whose elements are the same dot products over the batch (BLAS computes each one alike: the
tests check it).
"""

import numpy as np

from ...ops.elementwise import Relu
from ...ops.fast_reduce import sum_array
from ...ops.nn import Addmm, LinearMm
from ...tensor import _make


def layer_steps(graph, inputs, routed):
    """{call index: step} for the calls the executor runs itself: linear layers with a 2-D input
    and a 1-D bias (or none), and ReLU, on CPU. `routed`: ids of the parameters whose gradient
    goes back through autograd (not into `.grad` by the executor)."""
    params = {v.id: v.const for v in graph.values() if v.const is not None}
    if any(type(t._data) is not np.ndarray for t in [*inputs, *params.values()]):
        return {}  # CUDA arrays: every call takes the general path
    needs = _needing_grad(graph, inputs, params)
    steps = {}
    for call in graph.calls:
        if any(value.device != "cpu" for value in call.inputs()):
            continue  # a CUDA array (made inside the function): the general path
        if _is_linear(call):
            steps[call.index] = LinearStep(call, needs)
        elif call.fn is Relu and not call.kwargs and np.dtype(call.outputs[0].dtype).kind == "f":
            steps[call.index] = ReluStep(call)
    readers, returned = graph.consumers(), {v.id for v in graph.outputs}

    def only_reader(value):  # the step that alone reads `value` (not returned), if any
        found = readers.get(value.id, [])
        return steps.get(found[0].index) if len(found) == 1 and value.id not in returned else None

    hosting_later = False  # does a layer after this one host? (the loop goes last layer first)
    for linear in reversed([step for step in steps.values() if isinstance(step, LinearStep)]):
        relu = only_reader(linear.out)
        if not isinstance(relu, ReluStep):
            continue
        relu.in_place = True  # the linear layer's result is ours and nobody else reads it
        after, w = only_reader(relu.out), linear.w
        if (isinstance(after, LinearStep) and after.x.id == relu.out.id and after.needs[1]
                and w.id in params and w.id in needs and w.id not in routed
                and len(readers[w.id]) == 1 and 2 * linear.out.nbytes <= w.nbytes
                and not (hosting_later and _updated_in_backward(params[w.id]))):  # fmt: skip
            linear.hosts = hosting_later = True  # see the module docstring
            after.input_grad_into = linear
    return steps


def _updated_in_backward(weight):
    """Has the weight post-accumulate hooks (the optimizer's step, run inside backward)? Then its
    gradient is dropped right after it is written: its buffer is idle memory no longer."""
    return bool(weight._post_accumulate_grad_hooks)


def _is_linear(call):
    if call.kwargs or call.fn not in (Addmm, LinearMm):
        return False
    x, w = call.args if call.fn is LinearMm else call.args[1:]
    bias_ok = call.fn is LinearMm or call.args[0].shape == (w.shape[0],)
    return bias_ok and len(x.shape) == 2 and x.dtype == w.dtype and np.dtype(x.dtype).kind == "f"


def _needing_grad(graph, inputs, params):
    """Ids of the values whose gradient backward computes (as autograd decides it)."""
    needs = {v.id for v, t in zip(graph.inputs, inputs, strict=True)
             if t.requires_grad and t._data.dtype.kind == "f"}  # fmt: skip
    needs |= {i for i, t in params.items() if t.requires_grad and t._data.dtype.kind == "f"}
    for call in graph.calls:
        if any(v.id in needs for v in call.inputs()):
            needs |= {v.id for v in call.outputs
                      if v is not None and np.dtype(v.dtype).kind == "f"}  # fmt: skip
    return needs


class LinearStep:
    """`x @ W.T (+ b)`, forward and backward, in numpy. When it `hosts`, W's gradient buffer
    holds the result (front) and, later, the result's gradient (back) until backward writes W's
    gradient over them; `input_grad_into` is the step whose buffer receives x's gradient."""

    def __init__(self, call, needs):
        self.call, self.out = call, call.outputs[0]
        self.bias, self.x, self.w = call.args if call.fn is Addmm else (None, *call.args)
        self.needs = [v is not None and v.id in needs for v in (self.bias, self.x, self.w)]
        self.hosts, self.input_grad_into = False, None
        self.buffer = self.saved_x = self.saved_w = None

    def __repr__(self):
        note = f" (weight gradient hosts %{self.out.id} and its gradient)" if self.hosts else ""
        return f"linear %{self.out.id}{note}"

    def forward(self, lookup):
        x, w = lookup(self.x)._data, lookup(self.w)._data
        front = None
        if self.hosts:
            self.buffer = np.empty(w.shape, w.dtype)
            front = self.buffer.reshape(-1)[: self.out.nbytes // w.itemsize].reshape(self.out.shape)
        out = np.matmul(x, w.T, out=front)  # what Addmm and LinearMm compute, into the front
        if self.bias is not None:
            np.add(out, lookup(self.bias)._data, out=out)
        _, needs_x, needs_w = self.needs
        self.saved_x, self.saved_w = (x if needs_w else None), (w if needs_x else None)
        return out

    def back(self, shape):
        """The last `shape`-sized part of the hosted buffer: where the result's gradient goes."""
        flat = self.buffer.reshape(-1)
        return flat[flat.size - int(np.prod(shape)) :].reshape(shape)

    def backward(self, grad, ours):
        """[(value id, gradient, ours)] for the inputs that need one, as Addmm's backward."""
        g, found = grad._data, []
        needs_bias, needs_x, needs_w = self.needs
        if needs_bias:  # Tensor.sum(0) computes it so
            found.append((self.bias.id, _make(sum_array(g, (0,), False)), True))
        if needs_x:
            into = self.input_grad_into
            out = into.back(g.shape[:1] + self.saved_w.shape[1:]) if into is not None else None
            found.append((self.x.id, _make(np.matmul(g, self.saved_w, out=out)), True))
        if needs_w:
            if self.hosts and np.may_share_memory(g, self.buffer):
                weight_grad = _weight_grad_over_its_input(self.buffer, g, self.saved_x)
            else:
                weight_grad = np.matmul(g.T, self.saved_x, out=self.buffer if self.hosts else None)
            found.append((self.w.id, _make(weight_grad), True))
        self.saved_x = self.saved_w = self.buffer = None
        return found


def _weight_grad_over_its_input(out, g, x):
    """`out[:] = g.T @ x`, where `g` (batch × rows) lies at the back of `out`'s own memory.

    Rows that end before `g` begins are free to write. Copy the columns that the rows lying
    over `g` need (A) and those of a few first rows (B) into those first rows' memory, write the
    rows between straight from `g`, then the rows over `g` from A; `g` is used up. The first rows
    are now the same problem, smaller, with B at their back: recurse. `out` has room for this
    whenever batch <= width / 2 (the condition under which it hosts `g` at all).
    """
    rows, width = out.shape
    batch = g.shape[0]
    over = (out.size - g.size) // width  # the rows from `over` on lie over g
    if rows - over == 1:  # no one-row products: numpy would use gemv, not gemm (other bits)
        over -= 1
    first = -(-batch * (rows - over) // max(width - batch, 1))  # rows whose memory holds A and B
    first = over if over - first == 1 else max(first, 2)
    if rows <= 32 or first > over:  # small (or no room): one product from a copy of g
        np.matmul(g.copy().T, x, out=out)
        return out
    flat = out.reshape(-1)
    a = flat[: batch * (rows - over)].reshape(batch, rows - over)
    b = flat[first * (width - batch) : first * width].reshape(batch, first)
    a[...], b[...] = g[:, over:], g[:, :first]
    if over > first:
        np.matmul(g[:, first:over].T, x, out=out[first:over])
    np.matmul(a.T, x, out=out[over:])  # over g, which is all used or copied now
    _weight_grad_over_its_input(out[:first], b, x)
    return out


class ReluStep:
    """`max(x, 0)`, in place on a linear layer's result that nobody else reads; its backward
    masks the incoming gradient in place when that array is ours (one pass, a bool mask)."""

    def __init__(self, call):
        self.call, self.x, self.out = call, call.args[0], call.outputs[0]
        self.in_place, self.result = False, None

    def __repr__(self):
        return f"relu %{self.out.id}{' (in place)' if self.in_place else ''}"

    def forward(self, lookup):
        x = lookup(self.x)._data
        if self.in_place:
            self.result = np.maximum(x, 0, out=x)
        else:  # what Relu computes
            self.result = np.maximum(x, 0).astype(x.dtype, copy=False)
        return self.result

    def backward(self, grad, ours):
        result, self.result = self.result, None
        g = grad._data
        if not (ours and g.flags.c_contiguous):  # what Relu's backward computes
            return [(self.x.id, _make(g * (result > 0)), True)]
        g, result = g.reshape(-1), result.reshape(-1)
        for i in range(0, g.size, 8192):  # in place, by blocks: the bool mask stays small
            np.multiply(g[i : i + 8192], result[i : i + 8192] > 0, out=g[i : i + 8192])
        return [(self.x.id, grad, True)]
