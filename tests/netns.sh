#!/usr/bin/env bash
# netns.sh - test hosts: N Linux network namespaces joined by veth pairs to a
# bridge, each with its own address on a private /24 (only the project's own
# addresses are used; nothing is routed outside the bridge).
#
#   source tests/netns.sh
#   netns_up PREFIX N [SUBNET]   # namespaces PREFIX0..PREFIX(N-1), bridge PREFIXbr,
#                                # host i = SUBNET.(i+1), the bridge SUBNET.254
#   netns_throttle PREFIX I RATE # tbf-limit host I's link both ways (e.g. 100mbit)
#   netns_down PREFIX N          # remove everything (idempotent; call from a trap)
#   netns_can || exit 77         # root + iproute2 + namespaces work here?
#
# Names: namespace PREFIXi, veth PREFIXvi (bridge side) / eth0 (inside).
# Needs root and iproute2; netns_can says why not on stderr.

netns_can() {
  if [ "$(id -u)" -ne 0 ]; then echo "netns: needs root" >&2; return 1; fi
  if ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
    echo "netns: needs iproute2 (ip, tc)" >&2; return 1
  fi
  local probe="cpnsprobe$$"
  if ! ip netns add "$probe" 2>/dev/null; then
    echo "netns: cannot create network namespaces here" >&2; return 1
  fi
  ip netns del "$probe" 2>/dev/null
  if ! ip link add "cpb$$" type bridge 2>/dev/null; then
    echo "netns: cannot create a bridge here" >&2; return 1
  fi
  ip link del "cpb$$" 2>/dev/null
  return 0
}

netns_up() {
  local p=$1 n=$2 net=${3:-10.213.7}
  ip link add "${p}br" type bridge || return 1
  ip addr add "$net.254/24" dev "${p}br" || return 1
  ip link set "${p}br" up || return 1
  local i
  for ((i = 0; i < n; i++)); do
    ip netns add "$p$i" || return 1
    ip link add "${p}v$i" type veth peer name eth0 netns "$p$i" || return 1
    ip link set "${p}v$i" master "${p}br" up || return 1
    ip -n "$p$i" addr add "$net.$((i + 1))/24" dev eth0 || return 1
    ip -n "$p$i" link set eth0 up || return 1
    ip -n "$p$i" link set lo up || return 1
  done
  # wait (bounded, 5 s) until every bridge port forwards (state 3)
  for ((i = 0; i < n; i++)); do
    local t
    for ((t = 0; t < 50; t++)); do
      [ "$(cat "/sys/class/net/${p}v$i/brport/state" 2>/dev/null)" = 3 ] && break
      sleep 0.1
    done
  done
}

netns_throttle() {
  local p=$1 i=$2 rate=$3
  # egress of the host (inside) and egress towards it (bridge side)
  ip netns exec "$p$i" tc qdisc add dev eth0 root tbf rate "$rate" burst 32kbit latency 400ms || return 1
  tc qdisc add dev "${p}v$i" root tbf rate "$rate" burst 32kbit latency 400ms || return 1
}

netns_down() {
  local p=$1 n=$2 i
  for ((i = 0; i < n; i++)); do
    ip netns pids "$p$i" 2>/dev/null | xargs -r kill -9 2>/dev/null
    ip link del "${p}v$i" 2>/dev/null
    ip netns del "$p$i" 2>/dev/null
  done
  ip link del "${p}br" 2>/dev/null
  return 0
}

# command-line use: netns.sh up|down|throttle ARGS...
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  cmd=${1:-}; shift || true
  case "$cmd" in
    up) netns_can && netns_up "$@" ;;
    down) netns_down "$@" ;;
    throttle) netns_throttle "$@" ;;
    can) netns_can ;;
    *) echo "usage: netns.sh up PREFIX N [SUBNET] | down PREFIX N | throttle PREFIX I RATE | can" >&2; exit 2 ;;
  esac
fi
