#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Says where this rank runs (host name, network namespace, fm0 address), then runs the rest.
set -euo pipefail
ns=$(ip netns identify "$$" 2>/dev/null || true)
addr=$(ip -o -4 addr show dev fm0 2>/dev/null | awk '{print $4}')
echo "where: rank ${FASTMSG_RUN_RANK:-?} host $(hostname) netns ${ns:-none} fm0 ${addr:-none}"
exec "$@"
