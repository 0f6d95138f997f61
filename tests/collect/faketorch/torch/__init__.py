"""A stand-in for the parts of PyTorch that chainprof.autotorch hooks (the
tests have no torch): the global optimizer step hooks, the DataLoader
iterator's __next__, torch.save and torch.load, with torch's signatures and
calling conventions. Only for tests/cli/run_python.sh."""
import pickle

from . import optim  # noqa: F401  (torch imports these eagerly too)
from .utils import data  # noqa: F401


def save(obj, f):
    if isinstance(f, str):
        with open(f, "wb") as fh:
            pickle.dump(obj, fh)
    else:
        pickle.dump(obj, f)


def load(f):
    if isinstance(f, str):
        with open(f, "rb") as fh:
            return pickle.load(fh)
    return pickle.load(f)
