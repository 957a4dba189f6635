"""Run lessons top to bottom and store their outputs as every reader can see them.

    python -m autograd_lab.teach.lesson_outputs notebooks/01_watching_backprop.ipynb ...

A graph widget's output holds two things: a reference to the live widget (its model id), which
only the kernel that made it can answer, and a picture of the same step (viz/column.py). A lesson
opened fresh has no such kernel, so the reference is dropped here: JupyterLab and Notebook 7 then
show the picture instead of "Error displaying widget: model not found", and nbconvert never
prefers a live view it cannot load (it needs the widget state, and a CDN, for that). Running the
cell again brings the live widget back. nbval ignores the reference, so the lessons' tests are
unchanged.
"""

import sys
from pathlib import Path

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def without_live_views(nb):
    """The notebook with every live-widget reference (and the stored widget state) removed, in
    place; outputs that held only such a reference go. Returns how many references it dropped."""
    dropped = 0
    for cell in nb.cells:
        kept = []
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_VIEW in data:
                del data[WIDGET_VIEW]
                dropped += 1
                if not data:  # a widget without a picture (a slider, say): nothing left to show
                    continue
            kept.append(output)
        if "outputs" in cell:
            cell.outputs = kept
    nb.metadata.pop("widgets", None)
    return dropped


def store_outputs(path, timeout=900):
    """Run the notebook at `path` on a fresh kernel (in its folder) and save it with its outputs,
    keeping pictures, not live-widget references. Returns how many references were dropped."""
    import nbformat
    from nbclient import NotebookClient

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=nb.metadata.get("kernelspec", {}).get("name", "python3"),
        resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=False,
        record_timing=False,  # no clocks in a stored notebook: the same run, the same bytes
    )
    client.execute()
    dropped = without_live_views(nb)
    nbformat.write(nb, path)
    return dropped


def main(argv=None):
    paths = sys.argv[1:] if argv is None else argv
    if not paths:
        sys.exit("usage: python -m autograd_lab.teach.lesson_outputs NOTEBOOK.ipynb ...")
    for path in paths:
        dropped = store_outputs(path)
        print(f"{path}: run, {dropped} live widget reference(s) replaced by their pictures")


if __name__ == "__main__":
    main()
