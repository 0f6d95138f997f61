#!/bin/bash
# p2p_pairs.sh - the send/recv pairing on a hand-made two-rank trace whose
# timings this test chooses: rank 0 sends rank 1 three messages, rank 1
# posts the recv of the first late (after the send started) and of the
# second early; the third send has no recv (its receiver untraced in that
# group: a different group name). Checked, from the chosen numbers:
#  - collectives_summary.p2p_matched = 4 (two pairs), matched includes them;
#  - the send_recv rows' wait = the earlier kernel's lead in each pair
#    (20 + 50 us), their total the kernels' durations;
#  - comm_matrix (0, 1): the three messages' bytes; time = each pair's
#    transfer (the later kernel's duration: 30 + 40 us) plus the unpaired
#    send's whole duration (60 us).
# Skips (77) without python3.
set -u
CHAINPROF=${CHAINPROF:?}
command -v python3 >/dev/null || { echo "skip: python3 is absent"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp" <<'PY'
import json, sys
root = sys.argv[1]
# (send start, send dur, recv start, recv dur) in us; recv None: no recv in this group
msgs = [(100.0, 50.0, 120.0, 30.0, "1"), (300.0, 40.0, 250.0, 90.0, "1"), (500.0, 60.0, None, None, "2")]
for r in (0, 1):
    ev = []
    for k, (ss, sd, rs, rd, pg) in enumerate(msgs):
        if r == 1 and rs is None:
            continue
        ts, dur, name = (ss, sd, "send") if r == 0 else (rs, rd, "recv")
        a = {"External id": k + 1, "device": 0, "stream": 28, "correlation": k + 1, "Collective name": name,
             "In msg nelems": 1048576, "Out msg nelems": 1048576, "Group size": 2, "dtype": "BFloat16",
             "Process Group Name": pg, "Process Group Description": "mesh_pp", "Process Group Ranks": "[0, 1]"}
        a["Dst Rank" if r == 0 else "Src Rank"] = 1 - r
        ev.append({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)",
                   "pid": r, "tid": 28, "ts": ts, "dur": dur, "args": a})
    json.dump({"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": r, "world_size": 2},
               "traceEvents": ev, "baseTimeNanoseconds": 0}, open(f"{root}/rank-{r}.json", "w"))
json.dump(msgs, open(f"{root}/msgs.json", "w"))
PY
"$CHAINPROF" analyze -o "$tmp/out.json" "$tmp"/rank-*.json 2>"$tmp/err" || { echo "FAIL: analyze"; cat "$tmp/err"; exit 1; }
python3 - "$tmp" <<'PY'
import json, sys
root = sys.argv[1]
msgs = json.load(open(f"{root}/msgs.json"))
rep = json.load(open(f"{root}/out.json"))
us = 1000
pairs = [m for m in msgs if m[2] is not None]
want_wait = sum(abs(m[0] - m[2]) for m in pairs) * us
want_total = sum(m[1] + (m[3] or 0) for m in msgs) * us
want_time = (sum(m[3] if m[2] > m[0] else m[1] for m in pairs) + sum(m[1] for m in msgs if m[2] is None)) * us
bad = []
s = rep["collectives_summary"]
if s["p2p_matched"] != 2 * len(pairs) or s["matched"] != 2 * len(pairs):
    bad.append(f"matched {s['matched']}, p2p_matched {s['p2p_matched']}, expected {2 * len(pairs)}")
rows = [r for r in rep["collectives"] if r["op"] == "send_recv"]
if sum(r["wait_ns"] for r in rows) != want_wait or sum(r["total_ns"] for r in rows) != want_total:
    bad.append(f"send_recv rows wait {[r['wait_ns'] for r in rows]} total {[r['total_ns'] for r in rows]}, "
               f"expected {want_wait} / {want_total}")
cm = {(p["src"], p["dst"]): p for p in rep["comm_matrix"]["pairs"]}
if set(cm) != {(0, 1)} or cm[(0, 1)]["bytes"] != len(msgs) * 1048576 * 2 or cm[(0, 1)]["time_ns"] != want_time:
    bad.append(f"matrix {rep['comm_matrix']['pairs']}, expected (0, 1) {len(msgs) * 2097152} bytes in {want_time} ns")
for b in bad:
    print("FAIL:", b)
print("ok" if not bad else "mismatch")
sys.exit(1 if bad else 0)
PY
