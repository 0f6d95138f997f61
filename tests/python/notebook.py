"""notebook.py - the notebook use, in a real Jupyter kernel (Debian's
python3-nbclient, python3-nbformat, python3-ipykernel): a notebook of three
lines of chainprof is written with nbformat and executed with nbclient; the
verdict it shows must be the CLI's, the layer table a DataFrame rendered as
HTML, the report itself the HTML report in a frame.

usage: notebook.py JOB_DIR CLI_JSON PYTHONPATH
"""
import json
import sys

import nbclient
import nbformat

job, cli_json, pypath = sys.argv[1:4]
cli = json.load(open(cli_json))
nb = nbformat.v4.new_notebook()
nb.cells = [
    nbformat.v4.new_code_cell("import sys; sys.path.insert(0, %r)\nimport chainprof" % pypath),
    nbformat.v4.new_code_cell("r = chainprof.analyze(%r)\nr.verdict.bottleneck_layer" % job),
    nbformat.v4.new_code_cell("r.layers"),
    nbformat.v4.new_code_cell("r"),
]
nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()


def data(cell):
    outs = [o for o in cell.outputs if o.output_type == "execute_result"]
    assert outs, cell.outputs
    return outs[0]["data"]


assert data(nb.cells[1])["text/plain"] == repr(cli["verdict"]["bottleneck_layer"]), data(nb.cells[1])
layers = data(nb.cells[2])
assert "text/html" in layers and "<table" in layers["text/html"], layers.keys()
for row in cli["layer_breakdown"]:
    assert ("<td>%d</td>" % row["time_ns"]) in layers["text/html"], row["time_ns"]
page = data(nb.cells[3])["text/html"]
assert page.startswith("<iframe sandbox") and "&lt;svg" in page
print("notebook: verdict %s, %d layer rows, HTML report %d bytes" % (
    cli["verdict"]["bottleneck_layer"], len(cli["layer_breakdown"]), len(page)))
