"""Reports of chainprof commands as Python objects.

A Report wraps the JSON report the C program wrote (the same bytes
`chainprof <command> --json` prints: one envelope, snake_case keys with
units). Its top-level sections are attributes:

    r = chainprof.analyze("traces/")
    r.verdict.bottleneck_layer        # nested objects: Section (a dict with attribute access)
    r.findings                        # tables (lists of rows): pandas DataFrames when pandas
    r.layers                          # is importable, else lists of dicts (CHAINPROF_NO_PANDAS=1
    r.to_dict()                       # forces lists); to_dict() is the JSON as it was

Aliases name sections by what they are: `layers` is `layer_breakdown`,
`verdicts` works for diagnose. In Jupyter a Report shows the HTML report
the C renderer wrote for the same run (self-contained, no script) in a
sandboxed frame. Nothing here computes a number: every value is the C
library's.
"""
import copy
import html
import os

ALIASES = {"layers": "layer_breakdown", "summary": "rank_summary"}


def _pandas():
    if os.environ.get("CHAINPROF_NO_PANDAS"):
        return None
    try:
        import pandas
    except ImportError:
        return None
    return pandas


def is_table(value):
    """A list of objects: one row each (the report's tables)."""
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def convert(value):
    """A report value as the API gives it: tables as DataFrames (or lists of
    dicts), objects as Sections, everything else as it is."""
    if is_table(value):
        pd = _pandas()
        rows = copy.deepcopy(value)
        return pd.DataFrame(rows) if pd is not None else rows
    if isinstance(value, dict):
        return Section(value)
    return copy.deepcopy(value)


class Section(dict):
    """A report object: a dict whose keys are also attributes (converted)."""

    def __getattr__(self, name):
        key = ALIASES.get(name, name)
        if key in self:
            return convert(dict.__getitem__(self, key))
        raise AttributeError("%s: no key %r (keys: %s)" % (type(self).__name__, name, ", ".join(self.keys())))

    def __dir__(self):
        return sorted(set(self.keys()) | set(dir(dict)))

    def to_dict(self):
        return copy.deepcopy(dict(self))


class Report:
    """One chainprof command's report (see the module docstring)."""

    def __init__(self, data, html_text=None, exit_status=0, argv=None):
        self._data = data
        self._html = html_text
        self.exit_status = exit_status  # 4: a requested check failed (--fail-on), the report is complete
        self.argv = list(argv or [])

    @property
    def schema(self):
        return self._data.get("schema")

    @property
    def sections(self):
        """The report's top-level keys, in the report's order."""
        return list(self._data.keys())

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        key = ALIASES.get(name, name)
        if key in self._data:
            return convert(self._data[key])
        raise AttributeError("%s report has no section %r (sections: %s)" % (
            self.schema, name, ", ".join(self._data.keys())))

    def __getitem__(self, key):
        return convert(self._data[ALIASES.get(key, key)])

    def __contains__(self, key):
        return ALIASES.get(key, key) in self._data

    def __dir__(self):
        return sorted(set(self._data.keys()) | set(ALIASES) | {"to_dict", "sections", "schema", "html"})

    def to_dict(self):
        """The report exactly as the C program wrote it (a deep copy)."""
        return copy.deepcopy(self._data)

    def html(self):
        """The HTML report of this run (chainprof's own renderer), or None."""
        return self._html

    def _repr_html_(self):
        if not self._html:
            return None
        return ('<iframe sandbox="" style="width:100%%;height:720px;border:1px solid #ddd" srcdoc="%s"></iframe>'
                % html.escape(self._html, quote=True))

    def __repr__(self):
        verdict = self._data.get("verdict")
        extra = ""
        if isinstance(verdict, dict) and verdict.get("bottleneck_layer"):
            extra = " bottleneck=%s" % verdict["bottleneck_layer"]
        return "<chainprof.Report %s: %s%s>" % (self.schema, ", ".join(self._data.keys()), extra)
