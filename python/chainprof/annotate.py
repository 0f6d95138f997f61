"""Steps and regions for `chainprof run` (the framework layer).

    import chainprof
    for batch in loader:
        with chainprof.step():
            with chainprof.region("forward"):
                ...
            with chainprof.region("save", kind="checkpoint"):
                torch.save(model.state_dict(), path)

Outside `chainprof run` (CHAINPROF_OUT unset) every call is a no-op that
loads nothing. Under it, calls go to the collector `run` preloaded
(include/chainprof/chainprof.h) through ctypes: a region costs two calls
and its name is interned once.

Kinds tell the storage layer what file I/O inside a region is: "checkpoint",
"dataset", "dataloader" (the loop waiting for data), or "generic".
"""
import contextlib
import ctypes
import os
import threading

from . import _lib

KINDS = {"generic": 0, "checkpoint": 1, "dataset": 2, "dataloader": 3}

_state = threading.local()
_lock = threading.Lock()
_api = None
_names = {}
explicit_steps = False  # a program that marks its own steps turns the automatic marks off


def _load():
    global _api
    if _api is not None:
        return _api or None
    with _lock:
        if _api is None:
            if not os.environ.get("CHAINPROF_OUT"):
                _api = False
            else:
                lib = _lib.load(_lib.COLLECT)
                lib.chainprof_active.restype = ctypes.c_int
                lib.chainprof_status.restype = ctypes.c_char_p
                lib.chainprof_name.restype = ctypes.c_uint32
                lib.chainprof_name.argtypes = [ctypes.c_char_p]
                lib.chainprof_step_begin.argtypes = [ctypes.c_int64]
                lib.chainprof_region_begin.argtypes = [ctypes.c_uint32, ctypes.c_int]
                for f in ("chainprof_step_end", "chainprof_step_mark", "chainprof_region_end", "chainprof_flush"):
                    getattr(lib, f).restype = None
                _api = lib
    return _api or None


def active():
    """True when this process records (it runs under `chainprof run`)."""
    api = _load()
    return bool(api and api.chainprof_active())


def status():
    """What the collector does in this process, in one line."""
    api = _load()
    if not api:
        return "inactive: CHAINPROF_OUT is not set (run the job under `chainprof run`)"
    return api.chainprof_status().decode(errors="replace")


def _name_id(api, name):
    i = _names.get(name)
    if i is None:
        i = api.chainprof_name(str(name).encode())
        _names[name] = i
    return i


def _step_call(auto, name, *args):
    """A step call; one the program makes itself turns the automatic marks off."""
    global explicit_steps
    api = _load()
    if not api:
        return
    if not auto:
        explicit_steps = True
    getattr(api, name)(*args)


def step_begin(n=None, auto=False):
    _step_call(auto, "chainprof_step_begin", -1 if n is None else int(n))


def step_end(auto=False):
    _step_call(auto, "chainprof_step_end")


def mark_step(auto=False):
    """End the open step, if any, and begin the next."""
    _step_call(auto, "chainprof_step_mark")


@contextlib.contextmanager
def step(n=None):
    """One training step (numbered n, or one more than the last)."""
    step_begin(n)
    try:
        yield
    finally:
        step_end()


def region_begin(name, kind="generic"):
    api = _load()
    if api:
        api.chainprof_region_begin(_name_id(api, name), KINDS.get(kind, 0))


def region_end():
    api = _load()
    if api:
        api.chainprof_region_end()


@contextlib.contextmanager
def region(name, kind="generic"):
    """A named phase on the calling thread; kind as in KINDS."""
    if kind not in KINDS:
        raise ValueError("chainprof.region: kind %r is not one of %s" % (kind, ", ".join(sorted(KINDS))))
    region_begin(name, kind)
    try:
        yield
    finally:
        region_end()


def flush():
    """Write what has been recorded so far."""
    api = _load()
    if api:
        api.chainprof_flush()
