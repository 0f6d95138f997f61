"""Finding and loading chainprof's shared libraries (ctypes).

One place decides where a library comes from, so every binding (the
collector's annotations here; analysis bindings later) finds the same build:

1. an explicit path in the environment (CHAINPROF_COLLECT_LIB, which
   `chainprof run` sets for the collector it preloads; CHAINPROF_LIB_DIR
   for a directory holding any of them);
2. the checkout this package lives in: ../build*/ next to python/;
3. an installed copy: <prefix>/lib/chainprof/, <prefix>/lib/, and the
   system loader's search (ctypes.util.find_library).

The error names every place it looked. The analysis API (chainprof.api)
runs the chainprof executable, found the same way by binary(): CHAINPROF_BIN
(or CHAINPROF, what the tests set), the checkout's build*/chainprof, an
installed <prefix>/bin/chainprof, then PATH.
"""
import ctypes
import ctypes.util
import glob
import os
import shutil
import sys

_cache = {}

COLLECT = "chainprof_collect"


class LibraryNotFound(OSError):
    """No usable copy of a chainprof library was found."""


def _candidates(name):
    fname = "lib%s.so" % name
    env_var = "CHAINPROF_COLLECT_LIB" if name == COLLECT else None
    if env_var and os.environ.get(env_var):
        yield os.environ[env_var]
    lib_dir = os.environ.get("CHAINPROF_LIB_DIR")
    if lib_dir:
        yield os.path.join(lib_dir, fname)
    checkout = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for build in ["build"] + sorted(os.path.basename(p) for p in glob.glob(os.path.join(checkout, "build-*"))):
        yield os.path.join(checkout, build, fname)
    for prefix in dict.fromkeys([sys.prefix, sys.base_prefix, "/usr/local", "/usr"]):
        yield os.path.join(prefix, "lib", "chainprof", fname)
        yield os.path.join(prefix, "lib", fname)


def load(name=COLLECT):
    """The ctypes.CDLL of lib<name>.so (loaded once per process)."""
    if name in _cache:
        return _cache[name]
    looked = []
    for path in _candidates(name):
        looked.append(path)
        if os.path.isfile(path):
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                looked[-1] += " (%s)" % e
                continue
            _cache[name] = lib
            return lib
    found = ctypes.util.find_library(name)
    looked.append("the system loader's path (ctypes.util.find_library)")
    if found:
        lib = ctypes.CDLL(found)
        _cache[name] = lib
        return lib
    raise LibraryNotFound("chainprof: lib%s.so not found; looked in: %s (build chainprof with cmake, or set "
                          "CHAINPROF_LIB_DIR)" % (name, "; ".join(looked)))


def _checkout_builds():
    checkout = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for build in ["build"] + sorted(os.path.basename(p) for p in glob.glob(os.path.join(checkout, "build-*"))):
        yield os.path.join(checkout, build)


def binary():
    """The path of the chainprof executable (see the module docstring)."""
    looked = []
    for var in ("CHAINPROF_BIN", "CHAINPROF"):
        if os.environ.get(var):
            looked.append(os.environ[var])
            if os.access(os.environ[var], os.X_OK):
                return os.environ[var]
    for build in _checkout_builds():
        looked.append(os.path.join(build, "chainprof"))
        if os.access(looked[-1], os.X_OK):
            return looked[-1]
    for prefix in dict.fromkeys([sys.prefix, sys.base_prefix, "/usr/local", "/usr"]):
        looked.append(os.path.join(prefix, "bin", "chainprof"))
        if os.access(looked[-1], os.X_OK):
            return looked[-1]
    found = shutil.which("chainprof")
    if found:
        return found
    looked.append("PATH")
    raise LibraryNotFound("chainprof: the chainprof executable was not found; looked in: %s (build chainprof with "
                          "cmake or make, or set CHAINPROF_BIN)" % "; ".join(looked))
