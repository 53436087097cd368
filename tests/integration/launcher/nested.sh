# SPDX-License-Identifier: BSD-3-Clause
# Under another launcher (mpirun, srun, mpiexec) the ranks must not see its variables, or they
# would bootstrap through it. Fake such an environment around fastmsg-run.
. "$(dirname "$0")/common.sh"
export PMI_FD=99 PMI_PORT=127.0.0.1:9 PMI_ID=0 PMI_RANK=0 PMI_SIZE=1 PMIX_RANK=0 \
    PMIX_NAMESPACE=outer PMIX_SERVER_URI41=outer PMIX_SERVER_URI2=outer \
    OMPI_COMM_WORLD_RANK=0 FASTMSG_RUN_RANK=7 KEEP_ME=yes

job -n 2 "$PROBE"
expect_rc 0
expect_count '^boot_probe: rank [01] of 2 ok \(backend run, ' out 2

job -n 1 -- env
expect_rc 0
expect_count '^(PMI_|PMIX_RANK=|PMIX_NAMESPACE=|PMIX_SERVER_URI|OMPI_)' out 0
expect_count '^FASTMSG_RUN_RANK=0$' out 1
expect_count '^KEEP_ME=yes$' out 1
echo ok
