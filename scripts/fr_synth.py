#!/usr/bin/env python3
"""fr_synth.py - write PyTorch Flight Recorder dumps of a simulated job, one
file per rank, with a fault planted on request (tests and benchmarks).

Standard library only: the dumps are plain dicts written with
pickle.dumps(..., protocol=2) (the form TORCH_NCCL_DUMP_ON_TIMEOUT writes) or
json (the form of dump_json), following the schema of PyTorch's
FlightRecorderDetail.hpp: version, pg_config {name: {name, desc, ranks}},
pg_status, comm_lib_version, entries [{record_id, pg_id, process_group,
collective_seq_id, p2p_seq_id, op_id, profiling_name, time_created_ns,
input_sizes, input_dtypes, output_sizes, output_dtypes, state,
time_discovered_started_ns, time_discovered_completed_ns, retired,
timeout_ms, is_p2p, frames}].

The job: `ranks` ranks in one world group ("0", default_pg) and tensor-
parallel groups of `tp` ranks; each step runs an all_reduce in its TP group,
optionally a pipeline send/recv between pairs, then a world all_reduce.
Every rank runs the same program; a rank stops where the fault says, and the
others block at the first op whose group holds a rank that never got there
(computed as a fixed point, so blocking propagates through groups as in a
real job). Ops up to a rank's block are completed; the op it blocks in is
started; with --ahead N it has enqueued N more (scheduled), as an
asynchronous DDP bucket loop does. Ring buffers keep the last --entries ops
of each rank, so record ids differ by rank.

Faults (--fault): healthy (all completed), stuck (everyone inside the last
world all_reduce), missing (the culprit stops on the host one collective
early), lagging (the same with --ahead 3 on the others), dead (the culprit's
file is not written), size / dtype / op (the culprit's last world op
differs), p2p (the culprit never posts its recv), truncated (a healthy job
whose culprit file is cut in half), corrupt (its bytes damaged).
Prints the ground truth as JSON on stdout.
"""
import argparse
import json
import os
import pickle
import sys

STATE = ("scheduled", "started", "completed")


def program(ranks, tp, steps, p2p):
    """The ops every rank runs in order: (group, op, peer pair or None)."""
    ops = []
    for _ in range(steps):
        ops.append(("tp", "all_reduce", None))
        if p2p:
            ops.append(("pair", "sendrecv", None))
        ops.append(("world", "all_reduce", None))
    return ops


def group_of(kind, r, tp, ranks):
    if kind == "world":
        return tuple(range(ranks))
    if kind == "tp":
        b = r // tp * tp
        return tuple(range(b, min(b + tp, ranks)))
    b = r // 2 * 2  # pipeline pairs (0,1), (2,3): 2k sends to 2k+1
    return tuple(x for x in (b, b + 1) if x < ranks)


def block_points(ops, ranks, tp, stop):
    """blocked[r]: index of the op rank r never finishes (len(ops) when it
    finishes all). `stop` maps culprits to the op index they stop before
    (on the host: they never enter it). Every rank runs the ops in one
    order, so one pass in that order propagates blocking: an op blocks its
    group when a member stopped before it or at it."""
    n = len(ops)
    blocked = {r: stop.get(r, n) for r in range(ranks)}
    if not stop:
        return blocked
    for i, (kind, _, _) in enumerate(ops):
        seen = set()
        for r in range(ranks):
            members = group_of(kind, r, tp, ranks)
            if members in seen:
                continue
            seen.add(members)
            if any(blocked[m] < i or (m in stop and blocked[m] <= i) for m in members):
                for m in members:
                    if m not in stop and blocked[m] > i:
                        blocked[m] = i
    return blocked


def pg_name(kind, members):
    if kind == "world":
        return "0", "default_pg"
    if kind == "tp":
        return str(1 + members[0] // max(1, len(members))), "tp"
    return "p%d" % members[0], "pp"


def frames(kind, step, r):
    user = "train_step" if kind == "world" else "forward"
    return [
        {"name": "all_reduce", "filename": "/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py", "line": 2501},
        {"name": "wrapper", "filename": "/usr/lib/python3/site-packages/torch/distributed/c10d_logger.py", "line": 83},
        {"name": user, "filename": "/job/train.py", "line": 120 if kind == "world" else 64},
        {"name": "main", "filename": "/job/train.py", "line": 200},
    ]


def entries_of(r, a):
    ops = a.ops
    seq = {}
    p2pseq = {}
    out = []
    end = min(len(ops), a.blocked[r] + (0 if r in a.stop else 1 + a.ahead))
    t0 = 1_700_000_000_000_000_000
    for i in range(end):
        kind, op, _ = ops[i]
        members = group_of(kind, r, a.tp, a.ranks)
        name, desc = pg_name(kind, members)
        state = 2 if i < a.blocked[r] else (1 if i == a.blocked[r] else 0)
        if a.fault == "stuck" and i == len(ops) - 1:
            state = 1
        sizes = [[a.numel]]
        dtype = "Float"
        pn = "nccl:" + op
        if i == a.fault_op and r in a.culprits:
            if a.fault == "size":
                sizes = [[a.numel // 2]]
            elif a.fault == "dtype":
                dtype = "BFloat16"
            elif a.fault == "op":
                pn = "nccl:all_gather"
        key = (name, members)
        if op == "sendrecv":
            if len(members) < 2:
                continue
            local = members.index(r)
            peer = 1 - local
            p2pseq[key] = p2pseq.get(key, 0) + 1
            pn = "nccl:send %d->%d" % (local, peer) if local == 0 else "nccl:recv %d<-%d" % (local, peer)
            cs = seq.get(key, 0)
            ps = p2pseq[key]
            is_p2p = True
        else:
            seq[key] = seq.get(key, 0) + 1
            cs = seq[key]
            ps = p2pseq.get(key, 0)
            is_p2p = False
        e = {
            "record_id": i, "pg_id": 0 if kind == "world" else 1, "process_group": (name, desc),
            "collective_seq_id": cs, "p2p_seq_id": ps, "op_id": i + 1, "profiling_name": pn,
            "time_created_ns": t0 + i * 1000000, "input_sizes": sizes, "input_dtypes": [dtype],
            "output_sizes": sizes, "output_dtypes": [dtype], "state": STATE[state],
            "time_discovered_started_ns": t0 + i * 1000000 + 10 if state >= 1 else None,
            "time_discovered_completed_ns": t0 + i * 1000000 + 500 if state == 2 else None,
            "retired": state == 2, "timeout_ms": 600000, "is_p2p": is_p2p,
            "thread_name": "pt_main_thread", "thread_id": "140000000000",
        }
        if a.form == "pickle":
            e["frames"] = frames(kind, i, r)
        out.append(e)
    return out[-a.entries:]


def dump_of(r, a):
    groups = {}
    for kind in ("world", "tp") + (("pair",) if a.p2p else ()):
        members = group_of(kind, r, a.tp, a.ranks)
        if kind == "pair" and len(members) < 2:
            continue
        name, desc = pg_name(kind, members)
        groups[name] = {"name": name, "desc": desc, "ranks": str(list(members))}
    d = {"version": a.version, "pg_config": groups, "comm_lib_version": "2.21.5",
         "pg_status": {"0": {"last_enqueued_collective": 0, "last_started_collective": 0, "last_completed_collective": 0}},
         "entries": entries_of(r, a)}
    if a.form == "json":
        for e in d["entries"]:
            e["process_group"] = list(e["process_group"])
            for k in ("time_discovered_started_ns", "time_discovered_completed_ns"):
                e[k] = e[k] or 0
        d = dict(sorted(d.items()))  # nlohmann::json orders keys
        return json.dumps(d).encode()
    return pickle.dumps(d, protocol=a.protocol)


def corrupt(data, form):
    """Replace one opcode (pickle) or one bracket (JSON) past the middle with
    a byte that cannot start one: the file stops decoding there."""
    if form == "pickle":
        import pickletools
        at = next(pos for _, _, pos in pickletools.genops(data) if pos >= len(data) // 2)
    else:
        at = data.find(b'{"', len(data) // 2)
    return data[:at] + b"\xff" + data[at + 1:]


def write_watchdog(a):
    """The console lines ProcessGroupNCCL's watchdog prints on the ranks
    that wait: one log of the same job (rank-tagged as torchrun tags them)."""
    lines = []
    for r in range(a.ranks):
        if r in a.culprits and a.fault in ("missing", "lagging", "dead", "p2p"):
            continue
        es = [e for e in entries_of(r, a) if e["state"] == "started"]
        if not es:
            continue
        e = es[0]
        name, desc = e["process_group"]
        op = e["profiling_name"].split(":")[1].split(" ")[0].upper().replace("ALL_REDUCE", "ALLREDUCE")
        numel = 1
        for x in e["input_sizes"][0] if e["input_sizes"] else []:
            numel *= x
        lines.append("[rank%d]:[E0630 22:41:10.%09d ProcessGroupNCCL.cpp:1375] [PG ID 0 PG GUID %s(%s) Rank %d] "
                     "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=%s, NumelIn=%d, NumelOut=%d, "
                     "Timeout(ms)=600000) ran for 600002 milliseconds before timing out." % (r, r, name, desc, r, e["collective_seq_id"], op, numel, numel))
    if a.nccl_warn:  # the culprit's own last words: an IB completion error (NCCL's WARN line)
        for c in a.culprits:
            lines.append("[rank%d]:node%d:%d:%d [%d] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer "
                         "10.0.0.2<56002> with status=12 opcode=0 len=0 vendor err 129 (Recv)" % (c, c // 8, 4000 + c, 4100 + c, c % 8))
    with open(os.path.join(a.out, "train.log"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--ranks", type=int, default=8)
    p.add_argument("--tp", type=int, default=2)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--entries", type=int, default=2000)
    p.add_argument("--numel", type=int, default=1048576)
    p.add_argument("--form", choices=("pickle", "json"), default="pickle")
    p.add_argument("--protocol", type=int, default=2)
    p.add_argument("--version", default="2.5")
    p.add_argument("--fault", default="healthy")
    p.add_argument("--culprit", default="3", help="rank(s), comma-separated")
    p.add_argument("--ahead", type=int, default=-1)
    p.add_argument("--prefix", default="nccl_trace_rank_")
    p.add_argument("--watchdog", action="store_true", help="also write train.log with the watchdog lines of the waiting ranks")
    p.add_argument("--nccl-warn", action="store_true", help="with --watchdog: the culprits' NCCL WARN IB completion error in train.log")
    a = p.parse_args()
    a.culprits = [int(x) for x in a.culprit.split(",") if x != ""]
    a.p2p = a.fault == "p2p"
    a.ops = program(a.ranks, a.tp, a.steps, a.p2p)
    n = len(a.ops)
    a.stop, a.fault_op = {}, -1
    last_world = n - 1
    per_step = 3 if a.p2p else 2
    if a.fault in ("missing", "dead"):
        a.stop = {c: last_world for c in a.culprits}
    elif a.fault == "lagging":  # room after the block for the others to enqueue
        a.stop = {c: last_world - 2 * per_step for c in a.culprits}
    elif a.fault == "p2p":
        a.stop = {c: n - 2 for c in a.culprits}  # never posts the send/recv of the last step
    elif a.fault in ("size", "dtype", "op"):
        a.fault_op = last_world
    if a.ahead < 0:
        a.ahead = 3 if a.fault == "lagging" else 0
    a.blocked = block_points(a.ops, a.ranks, a.tp, a.stop)
    if a.fault in ("size", "dtype", "op"):
        a.blocked = {r: last_world for r in range(a.ranks)}  # every rank inside the mismatched op
    if a.fault == "stuck":
        a.blocked = {r: last_world for r in range(a.ranks)}
    os.makedirs(a.out, exist_ok=True)
    for r in range(a.ranks):
        if a.fault == "dead" and r in a.culprits:
            continue
        data = dump_of(r, a)
        if r in a.culprits and a.fault == "truncated":
            data = data[: len(data) // 2]
        if r in a.culprits and a.fault == "corrupt":
            data = corrupt(data, a.form)
        with open(os.path.join(a.out, "%s%d" % (a.prefix, r)), "wb") as f:
            f.write(data)
    if a.watchdog:
        write_watchdog(a)
    json.dump({"fault": a.fault, "culprits": a.culprits, "ranks": a.ranks, "ops": n}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
