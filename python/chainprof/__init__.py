"""chainprof: where the time goes in AI training and inference jobs.

This package is the Python side of chainprof (a C toolkit, one binary with
subcommands). For notebooks, the commands as functions returning reports
(chainprof.api, chainprof.report):

    r = chainprof.analyze("traces/")   # also diagnose(paths), model(**o), plan(**o), probe(*names, **o)
    r.verdict; r.findings; r.layers    # tables as pandas DataFrames when pandas is importable
    r.to_dict()                        # the JSON report as the CLI prints it

And the framework layer of `chainprof run`:

    with chainprof.step(): ...              # one training step
    with chainprof.region("forward"): ...   # a phase (kind= for storage)

and, under `chainprof run`, automatic steps and data-loader/checkpoint
regions when torch is used (chainprof.autotorch). The library loader
(chainprof._lib) finds the C libraries of the checkout or the installation.
"""
from .annotate import KINDS, active, flush, mark_step, region, status, step, step_begin, step_end
from .api import ChainprofError, analyze, diagnose, model, plan, probe, run
from .report import Report, Section

__version__ = "0.1.0"
__all__ = ["KINDS", "active", "flush", "mark_step", "region", "status", "step", "step_begin", "step_end",
           "ChainprofError", "Report", "Section", "analyze", "diagnose", "model", "plan", "probe", "run"]
