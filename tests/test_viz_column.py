"""Pictures that fit a notebook's column (viz/column.py): wide graphs wrap into bands instead of
shrinking, the legend and caption wrap like words, film strips, and the Picture a cell shows."""

import base64
import re
import xml.etree.ElementTree as ET

import pytest
from conftest import traced_seed_example as seed_example

import autograd_lab as ag
from autograd_lab.viz import record
from autograd_lab.viz.column import (
    COLUMN_W,
    MAX_BANDS,
    Picture,
    filmstrip_svg,
    fitted_svg,
    key_steps,
    picture_bundle,
    render_fitted,
)
from autograd_lab.viz.layout import layout
from autograd_lab.viz.svg import to_svg

NS = {"svg": "http://www.w3.org/2000/svg"}


def chain(n):
    """A long chain of ops: a graph far wider than a notebook's column."""
    with record() as t:
        x = ag.tensor(0.5, requires_grad=True)
        z = x
        for _ in range(n):
            z = (z * 1.1 + 0.1).tanh()
        z.backward()
    return t.graph()


def size(svg):
    root = ET.fromstring(svg)
    return float(root.get("width")), float(root.get("height"))


def test_a_narrow_graph_is_drawn_as_to_svg_draws_it():
    t, names = seed_example()
    graph = t.graph(names=names)
    fitted, plain = fitted_svg(graph), to_svg(graph)
    assert size(fitted)[1] == size(plain)[1] and abs(size(fitted)[0] - size(plain)[0]) <= 2

    def drawing(svg):  # what is drawn on the white background, ids aside
        return re.sub(r"ag[0-9a-f]{10}", "ID", svg.split('fill="#ffffff"/>')[1])

    assert drawing(fitted) == drawing(plain)


def test_a_wide_graph_wraps_into_bands_no_wider_than_the_column():
    graph = chain(14)
    assert size(to_svg(graph))[0] > 6 * COLUMN_W  # drawn in one row it would be 6,600 px wide
    svg = fitted_svg(graph)
    width, _ = size(svg)
    assert width <= COLUMN_W
    root = ET.fromstring(svg)
    bands = root.findall("svg:svg", NS)
    assert len(bands) >= 7
    seen = []
    for band in bands:  # each band shows a slice of the drawing at full size: no scaling
        x, _, w, h = map(float, band.get("viewBox").split())
        assert (float(band.get("width")), float(band.get("height"))) == (w, h)
        assert w <= COLUMN_W
        seen.append((x, x + w))
    # together the bands show the whole width, without gaps (SVG numbers have one decimal)
    assert seen[0][0] == 0 and all(abs(a[1] - b[0]) <= 0.11 for a, b in zip(seen, seen[1:]))
    # every box is whole in one band: the cuts fall between columns of boxes
    for box in layout(graph)["nodes"].values():
        assert any(x0 <= box["x"] and box["x"] + box["w"] <= x1 for x0, x1 in seen)
    # the edge cut at each band's end is lettered there and where it goes on
    assert re.findall(r'text-anchor="end">A</text>', svg) and re.findall(r">A</text>", svg)


def test_every_text_keeps_its_size():
    svg = fitted_svg(chain(14), step=40)
    sizes = {float(s) for s in re.findall(r'font-size="([\d.]+)"', svg)}
    assert sizes <= {11.0, 12.0}


def test_legend_and_caption_wrap_to_the_column():
    graph = chain(3)
    steps = [s for s in range(1, 12)]
    for step in steps:
        svg = fitted_svg(graph, step=step, max_width=300)
        assert size(svg)[0] <= 300
        captions = re.findall(r'<text x="12.0" y="[\d.]+" fill="#111827">([^<]*)</text>', svg)
        assert captions and all(12 + 7.2 * len(line) <= 300 for line in captions)
        assert re.search(rf"step {step} of \d+", " ".join(captions))
    legend = fitted_svg(graph, max_width=300)
    entries = re.findall(
        r'<text x="([\d.]+)" y="([\d.]+)" fill="#374151" font-size="11">([^<]*)<', legend
    )
    assert len(entries) >= 4 and all(float(x) + 6.6 * len(t) <= 300 for x, _, t in entries)
    assert len({y for _, y, _ in entries}) >= 2  # the legend's entries take more than one row


def test_a_note_goes_under_the_picture_and_widens_it():
    t, names = seed_example()
    note = "A rather long note that says what to do with this picture when there is no kernel."
    svg = fitted_svg(t.graph(names=names), note=note, max_width=880)
    assert note in svg and size(svg)[0] >= 24 + 6.6 * len(note)


def test_filmstrip_shows_the_key_steps_side_by_side():
    t, names = seed_example()
    graph = t.graph(names=names)
    assert key_steps(graph) == [3, 4, 7, 9, 13, 15]
    svg = filmstrip_svg(graph)
    assert size(svg)[0] <= COLUMN_W
    frames = re.findall(r'<g transform="translate\((\d+\.\d),(\d+\.\d)\)">', svg)
    assert len(frames) == 6
    assert len({x for x, _ in frames}) == 1  # the 441 px graph fits once in 880 px...
    wide = filmstrip_svg(graph, max_width=1000)
    assert size(wide)[0] <= 1000
    frames = re.findall(r'<g transform="translate\((\d+\.\d),(\d+\.\d)\)">', wide)
    assert len({x for x, _ in frames}) == 2  # ...and twice in 1000 px: two frames a row
    assert svg.count(">input (leaf)</text>") == 1  # one legend for the strip


def test_filmstrip_of_a_wide_graph_stacks_wrapped_frames():
    svg = filmstrip_svg(chain(6), steps=[5, 30])
    assert size(svg)[0] <= COLUMN_W
    assert re.findall(r">step (\d+) of", svg) == ["5", "30"]


@pytest.mark.parametrize("steps", [[], [99], [-1], ["3"], [True]])
def test_filmstrip_steps_out_of_range_say_what_is_allowed(steps):
    t, names = seed_example()
    with pytest.raises(ValueError, match=r"steps from 0 to 15 \(0: before the forward pass"):
        filmstrip_svg(t.graph(names=names), steps)


def test_picture_is_svg_html_image_and_text():
    svg = fitted_svg(chain(2))
    picture = Picture(svg, "graph picture (8 nodes)")
    bundle = picture._repr_mimebundle_()
    assert bundle == picture_bundle(svg, "graph picture (8 nodes)")
    assert bundle["text/plain"] == repr(picture) == "graph picture (8 nodes)"
    assert picture.data == svg  # as IPython's SVG(...).data
    encoded = re.fullmatch(
        r'<img src="data:image/svg\+xml;base64,([^"]+)" alt="graph picture \(8 nodes\)"/>',
        bundle["text/html"],
    )
    assert base64.b64decode(encoded[1]).decode() == svg


@pytest.mark.parametrize("width", [100, "880", None])
def test_too_narrow_a_column_is_a_clear_error(width):
    with pytest.raises(ValueError, match="too narrow for a graph picture: .* at least 200 px"):
        fitted_svg(chain(2), max_width=width)
    with pytest.raises(ValueError, match="too narrow"):
        filmstrip_svg(chain(2), max_width=width)


def test_fitted_pictures_are_deterministic():
    assert fitted_svg(chain(14), step=50) == fitted_svg(chain(14), step=50)


def test_a_very_wide_graph_stores_the_bands_around_the_step_and_says_so():
    # 150 links of 3 ops: far more bands than MAX_BANDS; the picture keeps those around the
    # step's node (and only what they show), so a notebook holding it stays light
    graph = chain(150)
    placed = layout(graph)
    total = len(placed["nodes"])
    full = render_fitted(graph, placed)
    rows = re.search(r"rows 1 to (\d+) of the (\d+)", full)
    assert rows and int(rows[1]) == MAX_BANDS and int(rows[2]) > MAX_BANDS
    assert full.count("<use ") == MAX_BANDS
    step = 400  # a forward op near the end of the chain
    late = render_fitted(graph, placed, step=step)
    first, last, bands = map(int, re.search(r"rows (\d+) to (\d+) of the (\d+)", late).groups())
    assert last - first + 1 == MAX_BANDS and first > 1 and bands == int(rows[2])
    assert "around the step's node" in late
    assert len(late) < len(to_svg(graph)) / 3 and total > 400
