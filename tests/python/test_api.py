"""test_api.py - the chainprof Python package's notebook API against the CLI.

Run by tests/cli/python_api.sh with python3's unittest, with pandas and
without it (CHAINPROF_NO_PANDAS=1, or a python that has none), from the
checkout and from a venv where `pip install ./python` put the package.
Environment: CHAINPROF (the binary), CP_FIXTURES, CP_PY_TMP (a scratch dir).

Every number is compared with what the CLI prints for the same inputs:
the package must not compute any of them itself.
"""
import json
import os
import subprocess
import unittest

import chainprof
from chainprof import report as _report

EXE = os.environ["CHAINPROF"]
FIX = os.environ["CP_FIXTURES"]
TMP = os.environ["CP_PY_TMP"]
PANDAS = _report._pandas() is not None


def cli_json(*args):
    out = subprocess.run([EXE] + list(args) + ["--json"], stdout=subprocess.PIPE, check=True).stdout
    return json.loads(out)


def rows(table):
    """A DataFrame or a list of dicts as a list of dicts (NaN for null in pandas)."""
    if PANDAS:
        import pandas
        assert isinstance(table, pandas.DataFrame), type(table)
        return [{k: (None if (isinstance(v, float) and v != v) else v) for k, v in r.items()}
                for r in table.to_dict("records")]
    assert isinstance(table, list), type(table)
    return table


class Analyze(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.job = os.path.join(TMP, "job")
        if not os.path.isdir(cls.job):
            subprocess.run([EXE, "synth", "--out", cls.job, "--ranks", "4", "--gpus-per-node", "2", "--steps", "3",
                            "--inject", "slow-network=0.4"], stdout=subprocess.DEVNULL, check=True)
        cls.traces = sorted(os.path.join(cls.job, f) for f in os.listdir(cls.job) if f.startswith("rank-"))
        cls.r = chainprof.analyze(cls.traces)
        cls.cli = cli_json("analyze", "--no-history", *cls.traces)

    def test_same_numbers_as_the_cli(self):
        d = self.r.to_dict()
        for key in ("verdict", "findings", "rank_summary", "layer_breakdown", "collectives", "collectives_summary",
                    "stragglers", "slowest_step", "job", "diagnostics", "ranks"):
            self.assertEqual(d[key], self.cli[key], key)
        self.assertEqual(self.r.schema, self.cli["schema"])

    def test_sections_as_attributes(self):
        self.assertEqual(self.r.verdict.bottleneck_layer, self.cli["verdict"]["bottleneck_layer"])
        self.assertEqual(self.r.verdict.bottleneck_layer, "inter")
        self.assertEqual(rows(self.r.layers), self.cli["layer_breakdown"])
        self.assertEqual(rows(self.r.findings)[0]["code"], self.cli["findings"][0]["code"])
        self.assertEqual(rows(self.r.collectives), self.cli["collectives"])
        self.assertEqual(self.r.stragglers, self.cli["stragglers"])  # empty: a list, not a table
        self.assertEqual(rows(self.r.expert.rules), self.cli["expert"]["rules"])  # nested tables too
        self.assertIn("layers", dir(self.r))
        with self.assertRaises(AttributeError):
            self.r.no_such_section

    def test_tables_type(self):
        if PANDAS:
            import pandas
            self.assertIsInstance(self.r.findings, pandas.DataFrame)
            self.assertEqual(list(self.r.layers.columns), list(self.cli["layer_breakdown"][0].keys()))
        else:
            self.assertIsInstance(self.r.findings, list)

    def test_html(self):
        page = self.r._repr_html_()
        self.assertTrue(page.startswith("<iframe sandbox"))
        self.assertIn("&lt;svg", page)  # the HTML report's charts, escaped into srcdoc
        self.assertIn(self.cli["verdict"]["top_finding"].split(" ")[0], self.r.html())


class Commands(unittest.TestCase):
    def test_diagnose(self):
        d = os.path.join(FIX, "diagnose", "xid_ecc")
        paths = sorted(os.path.join(d, f) for f in os.listdir(d))
        r = chainprof.diagnose(paths)
        cli = cli_json("diagnose", *paths)
        self.assertEqual([v["code"] for v in rows(r.verdicts)], [v["code"] for v in cli["verdicts"]])
        self.assertEqual(r.to_dict()["summary"], cli["summary"])

    def test_model_and_plan(self):
        m = chainprof.model(preset="llama3-8b", gpus=8, gpu="H100", tp=2)
        cli = cli_json("model", "--preset", "llama3-8b", "--gpus", "8", "--gpu", "H100", "--tp", "2")
        self.assertEqual(m.step_time_s, cli["step_time_s"])
        self.assertEqual(m.mfu, cli["mfu"])
        self.assertEqual(m.breakdown.to_dict(), cli["breakdown"])
        p = chainprof.plan(preset="llama3-8b", gpus=64, gpu="H100", top=3)
        cli = cli_json("plan", "--preset", "llama3-8b", "--gpus", "64", "--gpu", "H100", "--top", "3")
        self.assertEqual(rows(p.layouts), cli["layouts"])
        self.assertEqual(p.best.to_dict(), cli["best"])

    def test_probe(self):
        r = chainprof.probe("storage", quick=True, dir=TMP, size="8M", rounds=1)
        self.assertEqual(r.schema.split("/")[0], "chainprof.probe")
        self.assertTrue(any(row["metric"].startswith("storage") or row.get("layer") == "storage"
                            for row in rows(r.results)))


class Errors(unittest.TestCase):
    def test_not_recognised(self):
        path = os.path.join(FIX, "kineto", "not_a_trace.json")
        with self.assertRaises(chainprof.ChainprofError) as c:
            chainprof.analyze(path)
        e = c.exception
        self.assertEqual((e.status, e.code, e.exit_status, e.file), ("format", -2, 3, path))
        self.assertIn("not recognised", e.message)

    def test_position(self):
        cfg = os.path.join(TMP, "bad-config.json")
        with open(cfg, "w") as f:
            f.write('{\n  "gpus": 8,\n  "tp": [\n}\n')
        with self.assertRaises(chainprof.ChainprofError) as c:
            chainprof.model(config=cfg)
        e = c.exception
        self.assertEqual((e.status, e.exit_status, e.file, e.line, e.col), ("usage", 2, cfg, 3, 10))
        self.assertEqual(str(e), "chainprof: %s:3:10: %s" % (cfg, e.message))

    def test_usage(self):
        with self.assertRaises(chainprof.ChainprofError) as c:
            chainprof.model(no_such_option=1)
        self.assertEqual((c.exception.status, c.exception.code, c.exception.exit_status), ("usage", -4, 2))
        self.assertIn("--no-such-option", c.exception.message)


if __name__ == "__main__":
    unittest.main()
