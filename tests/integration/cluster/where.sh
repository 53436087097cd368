#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Says where this rank runs (host name, network namespace, fm0 address), then runs the rest.
# The rank is fastmsg-run's, Open MPI's or hydra's (PMI_RANK).
set -euo pipefail
ns=$(ip netns identify "$$" 2>/dev/null || true)
addr=$(ip -o -4 addr show dev fm0 2>/dev/null | awk '{print $4}')
rank=${FASTMSG_RUN_RANK:-${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-?}}}
echo "where: rank $rank host $(hostname) netns ${ns:-none} fm0 ${addr:-none}"
exec "$@"
