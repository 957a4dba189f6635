"""The profiler (autograd.profiler and the torch.profiler namespace): the events PyTorch records
for a known graph, by name, nesting and count; self and total times that add up; the table, the
averages and the Chrome trace; and the options we cannot honour refused by name."""

import json
import time

import numpy as np
import pytest

import autograd_lab as ag
from autograd_lab.autograd.profiler import op_name

EVALUATE = "autograd::engine::evaluate_function: "


def _profile_known_graph(lib, record_shapes=False):
    """x * w, exp, sum inside a record_function block, then backward; the same in both libraries."""
    x = lib.tensor([0.5, 1.0, 1.5], requires_grad=True)
    w = lib.tensor([2.0, -1.0, 0.5], requires_grad=True)
    with lib.autograd.profiler.profile(record_shapes=record_shapes) as prof:
        with lib.autograd.profiler.record_function("forward"):
            loss = (x * w).exp().sum()
        loss.backward()
    return prof


def _children(event):
    return [child.name for child in event.cpu_children]


@pytest.mark.oracle
def test_forward_ops_and_backward_nodes_have_pytorchs_names_and_nesting(torch):
    ours, theirs = _profile_known_graph(ag), _profile_known_graph(torch)
    for prof in (ours, theirs):
        block = next(e for e in prof.function_events if e.name == "forward")
        assert _children(block) == ["aten::mul", "aten::exp", "aten::sum"]
    engine = [
        [e.name for e in prof.function_events if e.name.startswith(EVALUATE)]
        for prof in (ours, theirs)
    ]
    assert engine[0] == engine[1]
    assert engine[0][:3] == [EVALUATE + n for n in ("SumBackward0", "ExpBackward0", "MulBackward0")]
    for prof in (ours, theirs):
        for event in prof.function_events:
            if event.name.startswith(EVALUATE):
                assert event.cpu_parent is None  # the engine's events are top level
                assert _children(event) == [event.name[len(EVALUATE) :]]


@pytest.mark.oracle
def test_call_counts_are_pytorchs(torch):
    names = [
        "aten::mul",
        "aten::sum",
        "MulBackward0",
        "SumBackward0",
        EVALUATE + "MulBackward0",
        "torch::autograd::AccumulateGrad",
        "step",
    ]
    counts = []
    for lib in (ag, torch):
        x = lib.tensor([0.5, 1.0, 1.5], requires_grad=True)
        w = lib.tensor([2.0, -1.0, 0.5], requires_grad=True)
        with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU]) as prof:
            for _ in range(3):
                with lib.profiler.record_function("step"):
                    (x * w).sum().backward()  # MulBackward0 multiplies twice: 3 + 6 aten::mul
        averages = {row.key: row.count for row in prof.key_averages()}
        counts.append({name: averages.get(name, 0) for name in names})
    assert counts[0] == counts[1]
    assert counts[0]["aten::mul"] == 9


def test_profiling_changes_no_value_and_no_gradient():
    def run(profiled):
        x = ag.tensor([0.5, 1.0, 1.5], requires_grad=True)
        block = ag.autograd.profiler.profile(enabled=profiled)
        with block:
            loss = (x.exp() * x).softmax(0).max()
            loss.backward()
        return loss.item(), x.grad.tolist(), type(loss.grad_fn).__name__

    assert run(True) == run(False)


def test_a_custom_function_shows_under_its_class_name():
    class Square(ag.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = ag.tensor([1.0, 2.0], requires_grad=True)
    with ag.autograd.profiler.profile() as prof:
        Square.apply(x).sum().backward()
    events = {e.name: e for e in prof.function_events}
    assert _children(events["Square"]) == ["aten::mul"]  # its forward's ops run inside it
    assert EVALUATE + "SquareBackward" in events


def test_op_names_come_from_pytorchs_node_names():
    ops = {cls.node_name: cls for cls in ag.ops.registry.op_classes()}
    assert op_name(ops["MulBackward0"]) == "aten::mul"
    assert op_name(ops["LogSoftmaxBackward0"]) == "aten::log_softmax"
    assert op_name(ops["AddmmBackward0"]) == "aten::addmm"


# ---- times -------------------------------------------------------------------------------------


def test_self_time_is_total_time_less_the_children():
    with ag.autograd.profiler.profile() as prof:
        with ag.autograd.profiler.record_function("outer"):
            with ag.autograd.profiler.record_function("inner"):
                time.sleep(0.02)
            ag.ones(3) * 2
    events = {e.name: e for e in prof.function_events}
    outer, inner = events["outer"], events["inner"]
    assert inner.cpu_time_total >= 20_000  # microseconds: at least the sleep
    assert _children(outer) == ["inner", "aten::mul"]
    children = sum(child.cpu_time_total for child in outer.cpu_children)
    assert outer.self_cpu_time_total == pytest.approx(outer.cpu_time_total - children)
    assert 0 <= outer.self_cpu_time_total < inner.cpu_time_total
    for event in prof.function_events:
        assert 0 <= event.self_cpu_time_total <= event.cpu_time_total


def test_averages_and_the_total_add_up():
    prof = _profile_known_graph(ag)
    events = prof.function_events
    total = prof.total_average()
    assert total.key == "Total" and total.count == len(events)
    assert total.self_cpu_time_total == pytest.approx(sum(e.self_cpu_time_total for e in events))
    assert prof.self_cpu_time_total == pytest.approx(total.self_cpu_time_total)
    rows = prof.key_averages()
    assert sum(row.count for row in rows) == len(events)
    mul = next(row for row in rows if row.key == "aten::mul")
    mul_events = [e for e in events if e.name == "aten::mul"]
    assert mul.count == len(mul_events) == 4  # forward, ExpBackward0 once, MulBackward0 twice
    assert mul.cpu_time_total == pytest.approx(sum(e.cpu_time_total for e in mul_events))
    assert mul.cpu_time == pytest.approx(mul.cpu_time_total / 4)


@pytest.mark.oracle
def test_record_shapes_keeps_the_input_shapes(torch):
    for lib in (ag, torch):
        prof = _profile_known_graph(lib, record_shapes=True)
        mul = next(e for e in prof.function_events if e.name == "aten::mul")
        assert mul.input_shapes == [[3], [3]]
        table = prof.key_averages(group_by_input_shape=True).table(row_limit=50)
        assert "Input Shapes" in table and "[[3], [3]]" in table
    plain = _profile_known_graph(ag)
    assert all(e.input_shapes == [] for e in plain.function_events)


# ---- the table and the trace --------------------------------------------------------------------


@pytest.mark.oracle
def test_the_table_has_pytorchs_columns_and_the_ops(torch):
    tables = [
        _profile_known_graph(lib).key_averages().table(sort_by="self_cpu_time_total", row_limit=4)
        for lib in (ag, torch)
    ]
    for table in tables:
        lines = table.splitlines()
        titles = [t.strip() for t in lines[1].split("  ") if t.strip()]
        assert titles == [
            "Name",
            "Self CPU %",
            "Self CPU",
            "CPU total %",
            "CPU total",
            "CPU time avg",
            "# of Calls",
        ]
        assert len(lines) == 3 + 4 + 2  # rules and header, four rows, rule and total
        assert lines[-1].startswith("Self CPU time total: ")
    ours = _profile_known_graph(ag).key_averages().table(row_limit=100)
    for name in ["aten::mul", "aten::exp", "aten::sum", "forward", "ExpBackward0"]:
        assert name in ours


def test_the_table_is_sorted_largest_first():
    prof = _profile_known_graph(ag)
    averages = prof.key_averages()
    table = averages.table(sort_by="cpu_time_total", max_name_column_width=None)
    listed = [line.strip().split("  ")[0] for line in table.splitlines()[3:-2]]
    totals = {row.key: row.cpu_time_total for row in averages}
    assert listed == sorted(totals, key=totals.get, reverse=True)
    with pytest.raises(AttributeError, match="no such column"):
        averages.table(sort_by="speed")


def test_long_names_are_cut_to_the_name_column():
    table = _profile_known_graph(ag).key_averages().table()
    assert "autograd::engine::evaluate_function: torch::autograd..." in table  # as PyTorch cuts it
    assert "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad" not in table


def test_the_chrome_trace_is_valid_json_with_every_event(tmp_path):
    prof = _profile_known_graph(ag, record_shapes=True)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    spans = trace["traceEvents"]
    assert [span["name"] for span in spans] == [e.name for e in prof.function_events]
    for span, event in zip(spans, prof.function_events, strict=True):
        assert span["ph"] == "X" and span["dur"] >= 0
        assert np.isclose(span["ts"], event.start_us)
    mul = next(span for span in spans if span["name"] == "aten::mul")
    assert mul["args"]["Input Dims"] == [[3], [3]]


# ---- switching it on and off --------------------------------------------------------------------


def test_record_function_as_a_decorator_and_outside_a_profiler():
    @ag.autograd.profiler.record_function("double")
    def double(t):
        return t * 2

    assert double(ag.ones(2)).tolist() == [2.0, 2.0]  # no profiler: nothing happens
    with ag.profiler.profile() as prof:
        double(ag.ones(2))
    assert [e.name for e in prof.function_events] == ["double", "aten::mul"]


def test_nothing_is_recorded_outside_the_block_or_when_disabled():
    x = ag.ones(2, requires_grad=True)
    with ag.autograd.profiler.profile() as prof:
        y = x * 2
    count = len(prof.function_events)
    y.sum().backward()
    assert len(prof.function_events) == count == 1
    with ag.autograd.profiler.profile(enabled=False) as off:
        x * 2
    assert len(off.key_averages()) == 0


def test_a_profile_inside_another_records_into_the_inner_one():
    with ag.autograd.profiler.profile() as outer:
        ag.ones(2) * 2
        with ag.autograd.profiler.profile() as inner:
            ag.ones(2) + 1
        ag.ones(2).exp()
    assert [e.name for e in inner.function_events] == ["aten::add"]
    assert [e.name for e in outer.function_events] == ["aten::mul", "aten::exp"]


def test_results_are_read_after_the_block():
    with ag.autograd.profiler.profile() as prof:
        with pytest.raises(RuntimeError, match="after the block"):
            prof.key_averages()


@pytest.mark.parametrize(
    "make",
    [
        lambda: ag.autograd.profiler.profile(use_cuda=True),
        lambda: ag.autograd.profiler.profile(profile_memory=True),
        lambda: ag.autograd.profiler.profile(with_flops=True),
        lambda: ag.profiler.profile(activities=[ag.profiler.ProfilerActivity.CUDA]),
        lambda: ag.profiler.profile(schedule=lambda step: None),
        lambda: ag.profiler.schedule(wait=1, warmup=1, active=2),
        lambda: ag.profiler.tensorboard_trace_handler("./log"),
    ],
)
def test_what_cannot_be_measured_is_refused_by_name(make):
    with pytest.raises(NotImplementedError, match="profile|schedule|trace"):
        make()


def test_options_left_off_are_accepted_as_pytorch_scripts_pass_them():
    with ag.profiler.profile(
        activities=[ag.profiler.ProfilerActivity.CPU], profile_memory=False, with_stack=False
    ) as prof:
        ag.ones(2) * 2
        prof.step()
    assert [e.name for e in prof.events()] == ["aten::mul"]
