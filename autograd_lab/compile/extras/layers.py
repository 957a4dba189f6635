"""Linear layers and ReLU that share memory in a planned run: `HostedLinear` and `InPlaceRelu`.

    >>> import autograd_lab as ag
    >>> from autograd_lab.compile import trace
    >>> from autograd_lab.compile.extras.layers import plan_layers
    >>> model = ag.nn.Sequential(ag.nn.Linear(8, 4), ag.nn.ReLU(), ag.nn.Linear(4, 3))
    >>> x = ag.randn(2, 8)
    >>> graph = trace(lambda x: model(x).sum(), x)
    >>> for call in plan_layers(graph, [x]).values():  # what runs in place of the traced calls
    ...     print(call)
    %3 = hosted_linear(%1, %0, %2, host=Host %3)
    %4 = in_place_relu(%3, host=Host %3, mask_in_place=True)
    %7 = hosted_linear(%5, %4, %6, grad_into=Host %3)

Where does a training step of an MLP peak? At the end of backward, when the first layer's weight
gradient is made: every weight gradient is alive then (they are what the step returns), and so is
the gradient flowing into that layer, which the product `grad.T @ input` reads. The results of
the step cannot be made smaller, but that incoming gradient need not take memory of its own:

1. A weight's gradient buffer is written only when its layer's backward runs, last of all for
   the first layer. Until then that memory is idle, so the layer's forward allocates it and
   keeps in it the layer's output (at the front; its ReLU runs in place), and later the gradient
   that flows back into that output (at the back): the next layer's backward writes it there
   (`out=`) and ReLU's backward masks it in place.

       W1's gradient buffer, 512 x 784:  [ relu(x @ W1.T + b1) |  idle  | gradient into it ]
                                           256 x 512 (forward)            256 x 512 (backward)

   Both fit when batch <= in_features / 2; otherwise the layer keeps plain arrays.
2. Row j of the weight gradient `grad.T @ input` reads only column j of `grad`. So the buffer is
   filled from the front while `grad` still sits at its back: the rows that end before `grad`
   begins are computed straight from it; the columns that the rows lying over `grad` need are
   first copied into the (idle) memory of the first rows, which are written last, the same way.

The price: a forward under grad mode holds the weight gradients' memory from the start, which
pays off only if backward follows (without gradients to record, a layer allocates nothing).

3. When the optimizer's step runs inside backward (a post-accumulate hook on the weight, see
   `Tensor.register_post_accumulate_grad_hook`), each weight gradient is dropped right after it
   is written, so the gradients are never all alive together, and a buffer made in forward is
   idle memory no longer: it sits under the backward of every later layer. Then a layer hosts
   only when no later layer does: one buffer, the one that sits under the least. (Measured on
   the 784-512-512-10 step, tracemalloc peak after warm-up, with `plan.replace` set to each
   choice: hosting in both layers 2.74 MB, in the first only 3.26 MB, in the second only
   2.21 MB, in neither 2.70 MB. On 784-512-10, 784-1024-256-10 and 784-512-512-512-512-10, the
   planned executor that came before these Functions found no other choice that peaked lower.)

How it runs. These are ordinary autograd Functions (`Op`s). The memory planner (memory.py)
decides which calls of a traced graph run as them (`plan_layers`, kept as `plan.replace`), and
the runner (compile/run.py) calls them in place of the traced `Addmm`/`LinearMm`/`Relu`. The
three calls that use one weight gradient's memory share one `Host`, which the runner makes new
for every run (`PerRun`): two runs of a plan never share memory. Their nodes are nodes of the
autograd graph like any other, so `loss.backward()` and `autograd.grad` go through them, and the
engine sums gradients, writes `.grad` and runs hooks as always. The weight gradient a hosting
layer returns is the Host's array, a fresh array the engine adopts as `.grad` without a copy
(engine.py, `_owned`). A Host is "lent" until backward writes the weight gradient over it; from
then on any backward through those nodes again (`retain_graph=True`) is refused, since what they
saved is overwritten. With `create_graph=True` they compute what `Addmm` and `Relu` do, with
differentiable ops and nothing in place, and their Host is "kept" as forward left it: the
differentiable gradients read it.

Every number comes from the same numpy calls as the ops (`Addmm`, `LinearMm`, `Relu`) make in
eager mode, except the weight gradient written over its own incoming gradient, which is computed
in row blocks: its elements are the same dot products over the batch, but BLAS may round a
block's products differently from the whole product's (OpenBLAS 0.3.31 does, in the last bits).
The tests compare those gradients with eager's to within float rounding, the rest bit for bit.
"""

import numpy as np

from ...autograd.function import Op
from ...autograd.grad_mode import is_grad_enabled
from ...ops.elementwise import Relu
from ...ops.nn import Addmm, LinearMm
from ...tensor import _make
from ..ir import Call
from ..run import PerRun

# ---- the shared memory of one run ----------------------------------------------------------------


class Host:
    """One run's loan of a weight gradient's memory (point 1), shared by the three calls that use
    it: the hosting layer (its output at the front), its ReLU (in place there) and the next layer
    (the gradient flowing back into that output, at the back). The runner makes one per run."""

    def __init__(self):
        self.array = None  # the weight gradient's buffer, allocated by the hosting layer's forward
        self.state = "lent"  # "written": the weight gradient is in it; "kept": write nothing there

    def front(self, shape):
        """The first `shape`-sized part of the buffer: where the layer's output goes."""
        return self.array.reshape(-1)[: int(np.prod(shape))].reshape(shape)

    def back(self, shape):
        """The last `shape`-sized part of the buffer: where the output's gradient goes."""
        flat = self.array.reshape(-1)
        return flat[flat.size - int(np.prod(shape)) :].reshape(shape)

    @property
    def writable(self):
        """May backward write into the buffer (not after create_graph=True went through it)?"""
        return self.state == "lent" and self.array is not None

    def check(self):
        """Called by every backward that reads or writes this memory: refuse it once the weight
        gradient was written over what forward kept here; under create_graph=True keep the memory
        as it is from now on, since the differentiable gradients being made read it."""
        if self.state == "written":
            raise RuntimeError(
                "this planned run has gone backward already: its backward wrote a weight gradient "
                "over memory that forward had lent to the layer's output and to the gradient "
                "flowing into it (compile/extras/layers.py), so retain_graph=True cannot keep "
                "them. Fix: run the planned function again to go backward again, or compile "
                "without plan_memory=True."
            )
        if is_grad_enabled():  # this backward records itself: create_graph=True
            self.state = "kept"


# ---- the two Functions ---------------------------------------------------------------------------


class HostedLinear(Op):
    """`bias + input @ weight.T` for a 2-D input (bias may be None), as `Addmm` computes it, in
    memory that a Host lends:

    host       this layer's weight gradient buffer: forward allocates it and writes the output at
               its front; backward writes the weight gradient over the whole of it (point 2)
    grad_into  the previous layer's Host: backward writes the input's gradient at its back
    """

    node_name = "HostedLinearBackward0"
    saved_names = ("mat1", "weight")  # as Addmm's

    @staticmethod
    def forward(ctx, bias, input, weight, host=None, grad_into=None):
        x, w = input._data, weight._data
        _, needs_input, needs_weight = ctx.needs_input_grad
        ctx.host, ctx.grad_into, ctx.bias_ndim = host, grad_into, 1  # bias_ndim: Addmm.backward's
        front = None
        if host is not None and needs_weight:  # its gradient will be made: lend its memory now
            host.array = np.empty(w.shape, w.dtype)
            front = host.front((x.shape[0], w.shape[0]))
        out = np.matmul(x, w.T, out=front)  # what Addmm computes, into the front
        if bias is not None:
            np.add(out, bias._data, out=out)
        ctx.save_for_backward(input if needs_weight else None, weight if needs_input else None)
        return out

    @staticmethod
    def backward(ctx, grad):
        for host in (ctx.host, ctx.grad_into):
            if host is not None:
                host.check()  # refused once written over; kept under create_graph
        host = ctx.host if ctx.host is not None and ctx.host.writable else None
        into = ctx.grad_into if ctx.grad_into is not None and ctx.grad_into.writable else None
        if is_grad_enabled() or (host is None and into is None):
            return Addmm.backward(ctx, grad)  # plainly: differentiable under create_graph
        needs_bias, needs_input, needs_weight = ctx.needs_input_grad
        input, weight = ctx.saved_tensors
        g = grad._data
        grad_bias = grad.sum(0) if needs_bias else None  # as Addmm's backward
        grad_input = grad_weight = None
        if needs_input:  # first: the weight gradient may be written over `g`
            out = into.back(g.shape[:1] + weight.shape[1:]) if into is not None else None
            grad_input = _make(np.matmul(g, weight._data, out=out))
        if needs_weight:
            x = input._data
            if host is None:
                grad_weight = _make(g.T @ x)
            else:
                if np.may_share_memory(g, host.array):  # the next layer wrote `g` at its back
                    _weight_grad_over_its_input(host.array, g, x)
                else:
                    np.matmul(g.T, x, out=host.array)
                grad_weight = _make(host.array)  # fresh: the engine adopts it as .grad
                host.array, host.state = None, "written"  # .grad owns the memory now
        return grad_bias, grad_input, grad_weight


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


class InPlaceRelu(Op):
    """`max(x, 0)` written over x: a linear layer's output that nobody else reads.

    host           the Host that x lives in when its layer hosts (backward refuses to run once
                   the weight gradient was written over the result it saved)
    mask_in_place  backward may zero the incoming gradient in place: the linear layer that alone
                   reads the result made that gradient, a fresh array nobody else holds
    """

    node_name = "InPlaceReluBackward0"
    saved_names = ("result",)  # as Relu's

    @staticmethod
    def forward(ctx, input, host=None, mask_in_place=False):
        ctx.host, ctx.mask_in_place = host, mask_in_place
        x = input._data
        np.maximum(x, 0, out=x)  # what Relu computes, in place
        counter = input._shared_version_counter()
        counter[0] += 1  # modified in place (nothing saved it: the plan checked)
        result = _make(x)
        result._version_counter = counter  # the same storage, the same counter
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        if ctx.host is not None:
            ctx.host.check()  # the result it saved is overwritten once the weight gradient is in
        g = grad._data
        if is_grad_enabled() or not (ctx.mask_in_place and g.flags.c_contiguous):
            return Relu.backward(ctx, grad)  # plainly: differentiable under create_graph
        (result,) = ctx.saved_tensors
        g, r = g.reshape(-1), result._data.reshape(-1)
        for i in range(0, g.size, 8192):  # in place, by blocks: the bool mask stays small
            np.multiply(g[i : i + 8192], r[i : i + 8192] > 0, out=g[i : i + 8192])
        return grad


# ---- which calls run as them ---------------------------------------------------------------------


def plan_layers(graph, inputs):
    """{call index: Call to run instead} for the calls that run as HostedLinear or InPlaceRelu:
    ReLU in place on a linear layer's result that it alone reads (a linear layer with a 2-D
    input, a 1-D bias or none, on CPU), and the hosting of point 1 where it fits. A keyword
    argument `PerRun(name, Host)` names the Host that the calls sharing it get in each run."""
    params = {v.id: v.const for v in graph.values() if v.const is not None}
    if any(type(t._data) is not np.ndarray for t in [*inputs, *params.values()]):
        return {}  # CUDA arrays: every call takes the general path
    needs = _needing_grad(graph, inputs, params)
    readers, returned = graph.consumers(), {v.id for v in graph.outputs}

    def only_reader(value):  # the call that alone reads `value` (not returned), if any
        found = readers.get(value.id, [])
        return found[0] if len(found) == 1 and value.id not in returned else None

    replace, hosting_later = {}, False  # does a layer after this one host? (last layer first)
    for linear in reversed([call for call in graph.calls if _is_linear(call)]):
        relu = only_reader(linear.outputs[0])
        if relu is None or not _is_relu(relu):
            continue
        after = only_reader(relu.outputs[0])
        # ReLU's incoming gradient is the input gradient that `after` makes: a fresh array
        mask_in_place = after is not None and _is_linear(after) and _reads_as_input(after, relu)
        bias, x, w = _parts(linear)
        fits = 2 * linear.outputs[0].nbytes <= w.nbytes  # the output and its gradient
        weight = params.get(w.id) if w.id in needs and len(readers[w.id]) == 1 else None
        hosts = (
            mask_in_place  # `after` writes the gradient into the buffer, ReLU masks it there
            and fits
            and weight is not None
            and _gradient_becomes_grad(weight)
            and not (hosting_later and updated_in_backward(weight))
        )
        if not hosts:
            replace[relu.index] = _as(relu, InPlaceRelu, mask_in_place=mask_in_place)
            continue
        hosting_later = True  # see the module docstring
        host = PerRun(f"%{linear.outputs[0].id}", Host)
        replace[linear.index] = _as(linear, HostedLinear, host=host)
        replace[relu.index] = _as(relu, InPlaceRelu, host=host, mask_in_place=True)
        if after.index in replace:  # it hosts too
            replace[after.index].kwargs["grad_into"] = host
        else:
            replace[after.index] = _as(after, HostedLinear, grad_into=host)
    return dict(sorted(replace.items()))


def _as(call, fn, **kwargs):
    """The Call that runs `fn.apply(..., **kwargs)` in place of `call` (same outputs)."""
    args = _parts(call) if fn is HostedLinear else call.args
    return Call(fn, fn.node_name, tuple(args), kwargs, call.outputs, call.index)


def _parts(call):
    """(bias or None, input, weight) of a linear call."""
    return call.args if call.fn is Addmm else (None, *call.args)


def _reads_as_input(linear, relu):
    """Does `linear` read relu's result as its input only (not as its weight or bias)?"""
    bias, x, w = _parts(linear)
    out = relu.outputs[0]
    return x is out and w is not out and bias is not out


def _gradient_becomes_grad(weight):
    """Does the weight's gradient become its `.grad` as it is? For a leaf without `register_hook`
    hooks (a hook may keep the array it is shown, and a non-leaf's gradient flows on, so the
    buffer lent in forward would be memory that eager mode never holds)."""
    return weight.grad_fn is None and not weight._hooks


def updated_in_backward(weight):
    """Has the weight post-accumulate hooks (the optimizer's step, run inside backward)? Then its
    gradient is dropped right after it is written: its buffer is idle memory no longer."""
    return bool(weight._post_accumulate_grad_hooks)


def _is_linear(call):
    if call.kwargs or call.fn not in (Addmm, LinearMm) or _on_device(call):
        return False
    bias, x, w = _parts(call)
    bias_ok = bias is None or bias.shape == (w.shape[0],)
    return bias_ok and len(x.shape) == 2 and x.dtype == w.dtype and np.dtype(x.dtype).kind == "f"


def _is_relu(call):
    float_result = np.dtype(call.outputs[0].dtype).kind == "f"
    return call.fn is Relu and not call.kwargs and float_result and not _on_device(call)


def _on_device(call):
    """Does the call read a CUDA array (made inside the function)? Then it takes the general path."""
    return any(value.device != "cpu" for value in call.inputs())


def _needing_grad(graph, inputs, params):
    """Ids of the values whose gradient backward computes (as autograd decides it)."""
    tensors = list(zip((v.id for v in graph.inputs), inputs, strict=True)) + list(params.items())
    needs = {i for i, t in tensors if t.requires_grad and t._data.dtype.kind == "f"}
    for call in graph.calls:
        if any(v.id in needs for v in call.inputs()):
            needs |= {v.id for v in call.outputs if v is not None and v.is_float}
    return needs
