#!/bin/bash
# commmatrix_pp.sh - the communication matrix on pipeline-parallel synth jobs
# (`synth --pp`, Kineto traces), against traffic this test computes from the
# job's parameters alone (synth.json config; rank = stage x dp + dp rank):
#  - pipeline: every hop v -> v+1 of the P x V virtual stages of DP rank d
#    carries M x S activation messages of p2p_bytes from stage v mod P to
#    stage v+1 mod P and as many gradient messages back; each pair's time is
#    its message count x p2p_ns (the transfer of a paired send/recv);
#  - data parallel: each step's reduce-scatter of dp_bytes puts
#    dp_bytes x (D-1)/D on the ring link to the next member of the stage's
#    DP group, for dp_ns of transfer;
#  - every pair exactly, its scope (nodes of --gpus-per-node), the layer
#    totals, the pipeline groups' bytes in by_group, no unplaced kernels;
#  - a partial trace (two stages of four): a traced rank's sends give its
#    row, a traced rank's recvs from an untraced stage give that sender's
#    messages to it (nothing paired them), and nothing else appears; times
#    are checked where both ends are traced;
#  - traces without the peer args (PP_LEGACY, lib/pp_job.sh): the peer from
#    the launching host op's "nccl:send A->B" title, or its
#    record_param_comms "Rank", gives the same matrix.
# Skips (77) without python3.
. "$(dirname "$0")/lib/py_prelude.sh"

check() { # JSON TRUTH [TRACED RANKS]
    python3 - "$@" <<'PY'
import json, sys
rep, truth = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
c = truth["config"]
P, D, M, V, S, G = c["pp"], c["dp"], c["microbatches"], c["chunks"], c["steps"], c["gpus_per_node"]
traced = set(map(int, sys.argv[3].split())) if len(sys.argv) > 3 else set(range(P * D))
want, ns, pp_bytes = {}, {}, {}
def add(a, b, nbytes, t, group=None):
    if a not in traced and b not in traced:
        return  # neither end's kernels were read
    want[(a, b)] = want.get((a, b), 0) + nbytes
    ns[(a, b)] = ns.get((a, b), 0) + t
    if group is not None:
        pp_bytes[group] = pp_bytes.get(group, 0) + nbytes
for d in range(D):
    for v in range(P * V - 1):
        a, b = (v % P) * D + d, ((v + 1) % P) * D + d
        if a != b:
            for x, y in ((a, b), (b, a)):
                add(x, y, M * S * c["p2p_bytes"], M * S * c["p2p_ns"], str(1 + P + d))
if D > 1:
    for p in range(P):
        for i in range(D):
            if p * D + i in traced:  # a ring link is its sender's row
                add(p * D + i, p * D + (i + 1) % D, S * round(c["dp_bytes"] * (D - 1) / D), S * c["dp_ns"])
cm = rep["comm_matrix"]
got = {(x["src"], x["dst"]): x for x in cm["pairs"]}
ok = True
def bad(msg):
    global ok
    print("FAIL:", msg); ok = False
if set(got) != set(want):
    bad("pairs %s, expected %s" % (sorted(set(got) ^ set(want))[:6], len(want)))
for k, b in want.items():
    if k not in got:
        continue
    timed = k[0] in traced and k[1] in traced
    if got[k]["bytes"] != b or (timed and got[k]["time_ns"] != ns[k]):
        bad("pair %s: %d bytes in %d ns, expected %d in %d" % (k, got[k]["bytes"], got[k]["time_ns"], b, ns[k]))
    scope = "inter" if k[0] // G != k[1] // G else "intra"
    if got[k]["scope"] != scope:
        bad("pair %s scope %s, expected %s" % (k, got[k]["scope"], scope))
inter = sum(b for k, b in want.items() if k[0] // G != k[1] // G)
if cm["layers"]["inter_bytes"] != inter or cm["layers"]["intra_bytes"] != sum(want.values()) - inter:
    bad("layers %s, expected inter %d of %d" % (cm["layers"], inter, sum(want.values())))
by = {g["group"]: g["bytes"] for g in cm["by_group"]}
for g, b in pp_bytes.items():
    if by.get(g) != b:
        bad("pipeline group %s: %s bytes, expected %d" % (g, by.get(g), b))
if cm["unplaced_kernels"]:
    bad("%d unplaced kernels" % cm["unplaced_kernels"])
print("ok" if ok else "mismatch", len(want), "pairs")
sys.exit(0 if ok else 1)
PY
}

. "$(dirname "$0")/lib/pp_job.sh"

pp_run pp4dp2 -- --pp 4 --dp 2
pp_run nodes -- --pp 4 --dp 2 --gpus-per-node 4 --inject straggler=1.2:1.5
pp_run interleaved -- --pp 4 --dp 3 --chunks 2 --microbatches 8 --gpus-per-node 6
pp_run pp1 -- --pp 1 --dp 4
PP_RANKS="0 1 2 3" pp_run partial -- --pp 4 --dp 2
PP_LEGACY=titles pp_run legacy_titles -- --pp 4 --dp 2 --chunks 2
PP_LEGACY=rank pp_run legacy_rank -- --pp 4 --dp 2
exit $fail
