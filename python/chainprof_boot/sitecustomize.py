"""Put on the job's PYTHONPATH by `chainprof run` (never imported otherwise):
Python imports sitecustomize at start-up, so the framework layer's automatic
marks (chainprof.autotorch) are installed with no change to the user's code.
Any other sitecustomize further down sys.path (Debian ships one) still runs.
"""
import importlib.machinery
import importlib.util
import os
import sys


def _chain():
    here = os.path.dirname(os.path.abspath(__file__))
    for d in sys.path:
        if os.path.abspath(d or ".") == here:
            continue
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", [d])
        if spec and spec.loader:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return


if os.environ.get("CHAINPROF_OUT"):
    try:
        from chainprof import autotorch
        autotorch.install()
    except Exception as e:  # the job runs on without the automatic marks
        sys.stderr.write("chainprof: automatic torch marks not installed: %s\n" % e)
_chain()
