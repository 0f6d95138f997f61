"""Automatic framework marks when torch is importable, with no change to the
user's code (installed by chainprof_boot/sitecustomize.py under `chainprof
run`):

- steps: a step ends each time the first optimizer that steps finishes its
  step() (torch's global optimizer step hooks), and the next begins at once;
  the first step begins at the first data-loader fetch or optimizer step,
  whichever comes first. A program that marks its own steps (chainprof.step)
  turns these off.
- data-loader wait: every DataLoader __next__ is a "dataloader" region named
  as PyTorch's profiler names it (enumerate(DataLoader)#<iterator>.__next__),
  so file reads inside are dataset I/O;
- checkpoints: torch.save / torch.load and torch.distributed.checkpoint's
  save / load are "checkpoint" regions, so their file I/O is checkpoint I/O
  wherever the files are.

Nothing imports torch here: a meta-path finder waits for the program to
import it and installs the hooks right after.
"""
import functools
import importlib.abc
import importlib.util
import sys

from . import annotate

_installed = False
_step = {"open": False, "owner": None}


def _begin_if_needed():
    if not _step["open"] and not annotate.explicit_steps:
        annotate.step_begin(auto=True)
        _step["open"] = True


def _pre_hook(optimizer, args, kwargs):
    if _step["owner"] is None or _step["owner"] is optimizer:
        _begin_if_needed()


def _post_hook(optimizer, args, kwargs):
    if annotate.explicit_steps:
        return
    if _step["owner"] is None:
        _step["owner"] = optimizer
    if _step["owner"] is optimizer:
        annotate.mark_step(auto=True)
        _step["open"] = True


def _wrap_region(fn, name, kind, begins_step=False):
    @functools.wraps(fn)
    def wrapper(*a, **k):
        if begins_step:
            _begin_if_needed()
        annotate.region_begin(name if isinstance(name, str) else name(a), kind)
        try:
            return fn(*a, **k)
        finally:
            annotate.region_end()
    wrapper.__chainprof_wrapped__ = True
    return wrapper


def _patch(owner, attr, name, kind, begins_step=False):
    fn = getattr(owner, attr, None)
    if fn is None or getattr(fn, "__chainprof_wrapped__", False):
        return
    setattr(owner, attr, _wrap_region(fn, name, kind, begins_step))


def install_torch(torch):
    global _installed
    if _installed:
        return
    _installed = True
    try:
        from torch.optim import optimizer as opt
        opt.register_optimizer_step_pre_hook(_pre_hook)
        opt.register_optimizer_step_post_hook(_post_hook)
    except (ImportError, AttributeError):
        pass  # torch before 2.0: no global optimizer hooks
    try:
        from torch.utils.data import dataloader as dl
        _patch(dl._BaseDataLoaderIter, "__next__",
               lambda a: "enumerate(DataLoader)#%s.__next__" % type(a[0]).__name__, "dataloader", begins_step=True)
    except (ImportError, AttributeError):
        pass
    _patch(torch, "save", "torch.save", "checkpoint")
    _patch(torch, "load", "torch.load", "checkpoint")
    try:
        import torch.distributed.checkpoint as dcp
        for f in ("save", "load", "save_state_dict", "load_state_dict"):
            _patch(dcp, f, "dcp." + f, "checkpoint")
    except ImportError:
        pass


class _TorchFinder(importlib.abc.MetaPathFinder):
    """Runs install_torch right after `import torch` completes."""

    def __init__(self):
        self._busy = False

    def find_spec(self, name, path=None, target=None):
        if name != "torch" or self._busy:
            return None
        self._busy = True
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self._busy = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            try:
                install_torch(module)
            finally:
                sys.meta_path[:] = [f for f in sys.meta_path if f is not self]

        spec.loader.exec_module = exec_module
        return spec


def install():
    """Arrange the automatic marks (torch imported now or later)."""
    if "torch" in sys.modules:
        install_torch(sys.modules["torch"])
    elif not any(isinstance(f, _TorchFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _TorchFinder())
