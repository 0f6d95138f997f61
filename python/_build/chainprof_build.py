"""A PEP 517 build backend for the chainprof package, standard library only.

Builds a pure-Python wheel (py3-none-any) of chainprof/ and chainprof_boot/
and an sdist of this directory. The C libraries are not in the wheel:
chainprof._lib finds them in the checkout's build/ or an installation
(see its docstring). Metadata comes from pyproject.toml's [project] table
(name, version, description, requires-python), read with the standard
library's tomllib when it has one, else by a line scan of that table.
"""
import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("chainprof", "chainprof_boot")


def _project():
    path = os.path.join(HERE, "pyproject.toml")
    try:
        import tomllib
        with open(path, "rb") as f:
            return tomllib.load(f)["project"]
    except ImportError:
        pass
    meta, in_project = {}, False
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if line.startswith("["):
            in_project = line == "[project]"
            continue
        m = re.match(r'^([A-Za-z-]+)\s*=\s*"([^"]*)"', line)
        if in_project and m:
            meta[m.group(1)] = m.group(2)
    return meta


def _files():
    for pkg in PACKAGES:
        for root, dirs, files in os.walk(os.path.join(HERE, pkg)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for f in sorted(files):
                if f.endswith(".py"):
                    full = os.path.join(root, f)
                    yield full, os.path.relpath(full, HERE).replace(os.sep, "/")


def _metadata(p):
    lines = ["Metadata-Version: 2.1", "Name: %s" % p["name"], "Version: %s" % p["version"]]
    if p.get("description"):
        lines.append("Summary: %s" % p["description"])
    if p.get("requires-python"):
        lines.append("Requires-Python: %s" % p["requires-python"])
    return "\n".join(lines) + "\n"


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    p = _project()
    dist = "%s-%s" % (p["name"], p["version"])
    name = "%s-py3-none-any.whl" % dist
    info = dist + ".dist-info"
    records = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        def add(arc, data):
            z.writestr(arc, data)
            records.append(_record_line(arc, data))
        for full, arc in _files():
            with open(full, "rb") as f:
                add(arc, f.read())
        add(info + "/METADATA", _metadata(p).encode())
        add(info + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: chainprof_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        add(info + "/top_level.txt", ("\n".join(PACKAGES) + "\n").encode())
        records.append(info + "/RECORD,,")
        z.writestr(info + "/RECORD", "\n".join(records) + "\n")
    return name


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    dist = "%s-%s" % (p["name"], p["version"])
    name = dist + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for full, arc in list(_files()) + [(os.path.join(HERE, "pyproject.toml"), "pyproject.toml"),
                                           (os.path.abspath(__file__), "_build/chainprof_build.py")]:
            t.add(full, arcname=dist + "/" + arc)
        data = _metadata(p).encode()
        ti = tarfile.TarInfo(dist + "/PKG-INFO")
        ti.size = len(data)
        t.addfile(ti, io.BytesIO(data))
    return name
