#!/usr/bin/env bash
# listen.sh - wait_listen PORT: return once a TCP socket listens on PORT (up
# to 10 s, else the caller's `fail`). A loaded machine may take seconds to
# start a server, so a fixed sleep loses the race; and a probing connect
# would itself become the server's one session, so the socket table is
# asked instead (ss, from iproute2, which scripts/deps.sh installs).
wait_listen() {
  for _ in $(seq 100); do
    ss -Hltn "sport = :$1" 2>/dev/null | grep -q . && return 0
    sleep 0.1
  done
  fail "nothing listens on port $1 after 10 s"
}
