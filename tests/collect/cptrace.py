"""An independent reader of .cptrace files for the tests, written from
docs/FORMATS.md ("chainprof run traces") and include/chainprof/cptrace.h: the
tests hold chainprof's own reader and the job's own counts against it.

    h, recs, strs = cptrace.read(path)
    h["rank"], h["role"], h["clock_sync"], ...
    for tid, r in recs: r.kind, r.op, r.flags, r.u32, r.t_ns, r.dur_ns, r.a, r.b, r.c
"""
import collections
import struct

KINDS = ["?", "STR", "THREAD", "CUDA", "NCALL", "IO", "STEP", "REGION", "CPU", "COMM", "NEV", "NEV2", "GPU", "CORR",
         "DROP", "END"]
IO_CALLS = ["open", "openat", "creat", "read", "pread", "readv", "preadv", "write", "pwrite", "writev", "pwritev",
            "fsync", "fdatasync", "close", "rename", "renameat", "fopen", "fclose", "fread", "fwrite"]
IO_CLASSES = ["other", "checkpoint", "dataset"]
Rec = collections.namedtuple("Rec", "kind op flags u32 t_ns dur_ns a b c")

HEADER = [("magic", "8s", 0), ("version", "I", 8), ("header_bytes", "I", 12), ("rec_bytes", "I", 16),
          ("flags", "I", 20), ("rank", "i", 24), ("world_size", "i", 28), ("local_rank", "i", 32),
          ("rank_source", "i", 36), ("pid", "i", 40), ("ppid", "i", 44), ("role", "i", 48), ("clock_sync", "i", 52),
          ("mono0_ns", "q", 56), ("real0_ns", "q", 64), ("clock_offset_ns", "q", 72), ("clock_rtt_ns", "q", 80),
          ("ring_bytes", "q", 88), ("step_first", "q", 96), ("step_last", "q", 104), ("host", "64s", 112),
          ("job", "64s", 176), ("cmd", "128s", 240), ("run_pid", "i", 368)]


def read(path):
    b = open(path, "rb").read()
    h = {}
    for name, fmt, off in HEADER:
        v = struct.unpack_from("<" + fmt, b, off)[0]
        h[name] = v.split(b"\0")[0].decode() if isinstance(v, bytes) else v
    assert h["magic"] == "CPTRACE1" and h["rec_bytes"] == 48, (path, h)
    recs, strs, off = [], {}, h["header_bytes"]
    while off + 16 <= len(b):
        magic, tid, n, _ = struct.unpack_from("<4I", b, off)
        if magic != 0x4B435043 or off + 16 + 48 * n > len(b):
            break
        off += 16
        i = 0
        while i < n:
            r = Rec(*struct.unpack_from("<BBHIqqQQQ", b, off + 48 * i))
            if r.kind == 1:
                start = off + 48 * (i + 1)
                strs[r.u32] = b[start:start + r.a].decode(errors="replace")
                i += 1 + (r.a + 47) // 48
                continue
            recs.append((tid, r))
            i += 1
        off += 48 * n
    return h, recs, strs


def io(recs, strs, call=None, cls=None):
    """IO records as (call, class, bytes, dur_ns, path)."""
    out = []
    for _, r in recs:
        if r.kind != 5:
            continue
        row = (IO_CALLS[r.op], IO_CLASSES[r.u32], r.b, r.dur_ns, strs.get(r.c, ""))
        if (call is None or row[0] in call) and (cls is None or row[1] == cls) and not r.flags & 1:
            out.append(row)
    return out
