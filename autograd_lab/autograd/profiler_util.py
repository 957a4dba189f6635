"""What a profiler recorded, and the table it prints: PyTorch's `torch.autograd.profiler_util`.

A `FunctionEvent` is one timed call (an op's forward, a backward node, a `record_function` block):
its name, when it started and ended, the events that ran inside it (`cpu_children`). Its *total*
time is the whole span; its *self* time is the total minus the totals of its children, the time
spent in the call itself. `EventList.key_averages()` adds up the events of each name into one
`FunctionEventAvg` row; `table()` prints the rows as PyTorch does:

    Name            Self CPU %  Self CPU  CPU total %  CPU total  CPU time avg  # of Calls

(the percentages are of the sum of all self times, which is the time profiled).
"""

import json
import os


def format_time(microseconds):
    """A duration as PyTorch prints it: 12.345us, 1.234ms or 1.234s."""
    if microseconds >= 1e6:
        return f"{microseconds / 1e6:.3f}s"
    if microseconds >= 1e3:
        return f"{microseconds / 1e3:.3f}ms"
    return f"{microseconds:.3f}us"


def _format_percent(part, whole):
    return f"{100.0 * part / whole if whole else 0.0:.2f}%"


class FunctionEvent:
    """One timed call. Times are in microseconds since the profiler started."""

    def __init__(self, id, name, start_us, thread, input_shapes, parent):
        self.id, self.name, self.thread = id, name, thread
        self.start_us, self.end_us = start_us, None
        self.input_shapes = input_shapes
        self.cpu_parent = parent
        self.cpu_children = []
        self.count = 1

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(child.cpu_time_total for child in self.cpu_children)

    @property
    def cpu_time(self):
        return self.cpu_time_total

    def __repr__(self):
        return (
            f"<FunctionEvent id={self.id} name={self.name!r} "
            f"cpu_time={format_time(self.cpu_time_total)} "
            f"self_cpu_time={format_time(self.self_cpu_time_total)} "
            f"input_shapes={self.input_shapes}>"
        )


class FunctionEventAvg:
    """The events of one name (and input shapes, if grouped by them) added up: one table row."""

    def __init__(self, key, input_shapes=None):
        self.key, self.input_shapes = key, input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0

    def add(self, event):
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        return self

    @property
    def cpu_time(self):
        """The average time of one call."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (
            f"<FunctionEventAvg key={self.key!r} count={self.count} "
            f"cpu_time_total={format_time(self.cpu_time_total)} "
            f"self_cpu_time_total={format_time(self.self_cpu_time_total)}>"
        )


class EventList(list):
    """A list of events (or of averages), with PyTorch's ways to summarize it."""

    def key_averages(
        self, group_by_input_shapes=False, group_by_stack_n=0, group_by_overload_name=False
    ):
        """One FunctionEventAvg per event name (per name and input shapes when grouped). Our ops
        have no overloads, so group_by_overload_name changes nothing."""
        group_by_input_shape = group_by_input_shapes
        if group_by_stack_n:
            raise NotImplementedError(
                "key_averages(group_by_stack_n=...): this profiler does not record call stacks "
                "(with_stack), so it cannot group by them. Fix: leave group_by_stack_n at 0."
            )
        rows = {}
        for event in self:
            shapes = str(event.input_shapes) if group_by_input_shape else None
            key = (event.key, shapes)
            if key not in rows:
                rows[key] = FunctionEventAvg(event.key, event.input_shapes if shapes else None)
            rows[key].add(event)
        averages = EventList(rows.values())
        averages._grouped_by_shapes = group_by_input_shape
        return averages

    def total_average(self):
        """All events added up into one row named "Total"."""
        total = FunctionEventAvg("Total")
        for event in self:
            total.add(event)
        return total

    def table(
        self,
        sort_by=None,
        row_limit=100,
        max_src_column_width=75,
        max_name_column_width=55,
        max_shapes_column_width=80,
        header=None,
        top_level_events_only=False,
        time_unit=None,
    ):
        """The averages as a text table; `sort_by` names a column's attribute (largest first):
        "self_cpu_time_total", "cpu_time_total", "cpu_time" (the average) or "count"."""
        events = self
        if top_level_events_only:
            events = EventList(e for e in events if getattr(e, "cpu_parent", None) is None)
        if events and isinstance(events[0], FunctionEvent):
            events = events.key_averages()
        with_shapes = getattr(events, "_grouped_by_shapes", False)
        rows = list(events)
        if sort_by is not None:
            for row in rows:
                if not hasattr(row, sort_by):
                    raise AttributeError(
                        f"table(sort_by={sort_by!r}): the rows have no such column. Fix: use "
                        "'self_cpu_time_total', 'cpu_time_total', 'cpu_time' or 'count'."
                    )
            rows.sort(key=lambda row: getattr(row, sort_by), reverse=True)
        return _render(rows, row_limit, with_shapes, max_name_column_width, header)

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (JSON): open it in chrome://tracing or Perfetto."""
        trace = {
            "traceEvents": [_trace_event(event) for event in self],
            "displayTimeUnit": "ms",
        }
        with open(path, "w") as file:
            json.dump(trace, file, indent=1)

    def __str__(self):
        return self.table()


def _trace_event(event):
    """One event in Chrome's trace format: a complete ("X") span in microseconds."""
    record = {
        "ph": "X",
        "cat": "cpu_op",
        "name": event.name,
        "pid": os.getpid(),
        "tid": event.thread,
        "ts": event.start_us,
        "dur": event.cpu_time_total,
        "args": {},
    }
    if event.input_shapes:
        record["args"]["Input Dims"] = event.input_shapes
    return record


def _render(rows, row_limit, with_shapes, max_name_width, header):
    """The rows as PyTorch lays them out: right-aligned columns two spaces apart, as wide as the
    widest entry of all rows (also those beyond `row_limit`, which are left out)."""
    self_total = sum(row.self_cpu_time_total for row in rows)
    name_width = max([len(row.key) for row in rows] + [4]) + 4
    if max_name_width is not None:
        name_width = min(name_width, max_name_width)
    titles = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    titles.append("# of Calls")
    widths = [name_width] + [12] * (len(titles) - 1)
    if with_shapes:
        shapes_width = min(max([len(str(r.input_shapes)) for r in rows] + [12]) + 4, 80)
        titles.append("Input Shapes")
        widths.append(shapes_width)

    def line(cells):
        return "".join(str(cell).rjust(width) + "  " for cell, width in zip(cells, widths))

    rule = line(["-" * width for width in widths])
    lines = [header] if header else []
    lines += [rule, line(titles), rule]
    for row in rows[:row_limit] if row_limit is not None and row_limit > 0 else rows:
        name = row.key if len(row.key) <= name_width else row.key[: name_width - 3] + "..."
        cells = [
            name,
            _format_percent(row.self_cpu_time_total, self_total),
            format_time(row.self_cpu_time_total),
            _format_percent(row.cpu_time_total, self_total),
            format_time(row.cpu_time_total),
            format_time(row.cpu_time),
            row.count,
        ]
        if with_shapes:
            cells.append(str(row.input_shapes))
        lines.append(line(cells))
    lines += [rule, f"Self CPU time total: {format_time(self_total)}"]
    return "\n".join(lines) + "\n"
