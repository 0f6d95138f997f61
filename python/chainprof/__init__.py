"""chainprof: where the time goes in AI training and inference jobs.

This package is the Python side of chainprof (a C toolkit, one binary with
subcommands). Today it holds the framework layer of `chainprof run`:

    with chainprof.step(): ...              # one training step
    with chainprof.region("forward"): ...   # a phase (kind= for storage)

and, under `chainprof run`, automatic steps and data-loader/checkpoint
regions when torch is used (chainprof.autotorch). The library loader
(chainprof._lib) finds the C libraries of the checkout or the installation.
"""
from .annotate import KINDS, active, flush, mark_step, region, status, step, step_begin, step_end

__version__ = "0.1.0"
__all__ = ["KINDS", "active", "flush", "mark_step", "region", "status", "step", "step_begin", "step_end"]
