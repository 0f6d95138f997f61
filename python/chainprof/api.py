"""chainprof's commands from Python: analyze, diagnose, model, plan, probe.

    import chainprof
    r = chainprof.analyze("traces/")                 # paths: one or a list
    r.verdict, r.findings, r.layers, r.collectives   # see chainprof.report
    chainprof.model(preset="llama3-8b", gpus=8, gpu="H100", tp=2).step_time_s

Options are the command's long options: a keyword with underscores for
dashes (fail_on="high" is --fail-on high), True for a flag, a list for a
repeated option; None and False are left out. `chainprof <command>
--help` lists them.

How: the package runs the chainprof executable (chainprof._lib.binary():
the checkout's build, an installed copy, or CHAINPROF_BIN) with --json and
an HTML copy of the report (-o), so every number is the C library's and
the same the CLI prints; nothing is re-implemented here. A failure raises
ChainprofError with the C error's status, code and position, which the
program writes to CHAINPROF_ERROR_FILE (docs/FORMATS.md, chainprof.error/1).
"""
import json
import os
import re
import subprocess
import tempfile

from . import _lib
from .report import Report


class ChainprofError(Exception):
    """A chainprof command failed.

    status:  the C status ("format", "io", "usage", "unavailable", "check", ...)
    code:    its number (cp_status: -2 for format, ...)
    exit_status: the process's exit code (1 runtime, 2 usage, 3 input not recognised, ...)
    file, line, col, offset: where, when the error is about an input (None otherwise)
    message: what failed and why
    stderr:  everything the program printed on stderr
    """

    def __init__(self, message, status=None, code=None, exit_status=None, file=None, line=None, col=None,
                 offset=None, sys_errno=0, stderr="", argv=None):
        self.message = message
        self.status, self.code, self.exit_status = status, code, exit_status
        self.file, self.line, self.col, self.offset = file, line, col, offset
        self.sys_errno = sys_errno
        self.stderr = stderr
        self.argv = list(argv or [])
        where = ""
        if file:
            where = file + "".join(":%d" % v for v in (line, col) if v) + ": "
        super().__init__("chainprof: %s%s" % (where, message))


# "chainprof: error: FILE:LINE:COL: msg" when no error record was written
_STDERR_ERROR = re.compile(r"^chainprof: error: (?:(?P<file>[^:\n]+):(?P<line>\d+)(?::(?P<col>\d+))?: )?(?P<msg>.*)$",
                           re.M)
_EXIT_STATUS = {1: "io", 2: "usage", 3: "format", 4: "check", 5: "unavailable"}


def _option_args(options):
    args = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            args.append(flag)
        elif isinstance(value, (list, tuple)):
            for v in value:
                args += [flag, str(v)]
        else:
            args += [flag, str(value)]
    return args


def _paths(paths):
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    return [os.fspath(p) for p in paths]


def _error(proc, errfile, argv):
    stderr = proc.stderr.decode("utf-8", "replace")
    try:
        with open(errfile, encoding="utf-8") as f:
            e = json.load(f)
        return ChainprofError(e["message"], e["status"], e["code"], proc.returncode, e["file"], e["line"], e["col"],
                              e["offset"], e["sys_errno"], stderr, argv)
    except (OSError, ValueError, KeyError):
        pass
    m = None
    for m in _STDERR_ERROR.finditer(stderr):
        pass
    status = _EXIT_STATUS.get(proc.returncode, "unknown")
    if m:
        return ChainprofError(m.group("msg"), status, None, proc.returncode, m.group("file"),
                              int(m.group("line")) if m.group("line") else None,
                              int(m.group("col")) if m.group("col") else None, None, 0, stderr, argv)
    return ChainprofError(stderr.strip() or "exit status %d" % proc.returncode, status, None, proc.returncode,
                          stderr=stderr, argv=argv)


def run(command, positional=(), html=True, **options):
    """Run `chainprof COMMAND [options] -- positional` and return its Report."""
    exe = _lib.binary()
    with tempfile.TemporaryDirectory(prefix="chainprof-py-") as tmp:
        errfile = os.path.join(tmp, "error.json")
        htmlfile = os.path.join(tmp, "report.html")
        argv = [exe, command] + _option_args(options) + ["--json"]
        if html:
            argv += ["-o", htmlfile]
        positional = list(positional)
        if positional:
            argv += ["--"] + positional
        env = dict(os.environ, CHAINPROF_ERROR_FILE=errfile)
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, check=False)
        # 4: a requested check failed (--fail-on): the report is complete
        if proc.returncode not in (0, 4):
            raise _error(proc, errfile, argv)
        try:
            data = json.loads(proc.stdout.decode("utf-8"))
        except ValueError as e:
            raise ChainprofError("the report is not JSON: %s" % e, "internal", None, proc.returncode,
                                 stderr=proc.stderr.decode("utf-8", "replace"), argv=argv)
        text = None
        if html and os.path.exists(htmlfile):
            with open(htmlfile, encoding="utf-8") as f:
                text = f.read()
        return Report(data, text, proc.returncode, argv)


def analyze(paths, **options):
    """Traces and evidence files -> layered breakdown, collectives, stragglers, findings, verdict.
    Not recorded in the run history unless history=True."""
    if not options.pop("history", False):
        options.setdefault("no_history", True)
    return run("analyze", _paths(paths), **options)


def diagnose(paths, **options):
    """Failure logs and Flight Recorder dumps -> verdicts (the rule book)."""
    return run("diagnose", _paths(paths), **options)


def model(**options):
    """The analytical step-time, MFU and memory model of one training layout."""
    return run("model", **options)


def plan(**options):
    """Search parallel layouts (the best first) with the performance model."""
    return run("plan", **options)


def probe(*probes, **options):
    """Measure this machine layer by layer (probes by name, e.g. "memory"; none: a quick pass of all).
    Not recorded in the run history unless history=True."""
    if not options.pop("history", False):
        options.setdefault("no_history", True)
    return run("probe", probes, **options)
