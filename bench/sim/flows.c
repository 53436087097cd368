/* SPDX-License-Identifier: BSD-3-Clause */
/* How SimGrid shares a link among MPI messages: rank 0 sends BYTES to each rank named, all at
 * once (a rank named twice gets two messages), and each receiver prints when its messages were
 * all in, in simulated microseconds from a barrier. bench/sim/README.md has the commands.
 * usage: smpirun -np N ... flows BYTES RANK[,RANK...] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLOWS_MAX 64

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, dest[FLOWS_MAX], n = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long bytes = argc > 2 ? atol(argv[1]) : 0;
    for (char *s = argc > 2 ? strtok(argv[2], ",") : NULL; s && n < FLOWS_MAX;
         s = strtok(NULL, ","))
        dest[n++] = atoi(s);
    int ok = bytes > 0 && bytes <= (1L << 30) && n > 0;
    for (int i = 0; i < n; i++)
        ok = ok && dest[i] > 0 && dest[i] < size;
    if (!ok) {
        if (rank == 0)
            fprintf(stderr, "usage: flows BYTES RANK[,RANK...] (1 <= RANK < %d, at most %d)\n",
                    size, FLOWS_MAX);
        MPI_Finalize();
        return 2;
    }
    int mine = 0; /* messages this rank receives */
    for (int i = 0; i < n; i++)
        mine += dest[i] == rank;
    int count = rank == 0 ? n : mine;
    char *buf = malloc((size_t)bytes * (size_t)(count ? count : 1));
    MPI_Request req[FLOWS_MAX];
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < count; i++) {
        char *at = buf + (size_t)bytes * (size_t)i;
        if (rank == 0)
            MPI_Isend(at, (int)bytes, MPI_BYTE, dest[i], 0, MPI_COMM_WORLD, &req[i]);
        else
            MPI_Irecv(at, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &req[i]);
    }
    MPI_Waitall(count, req, MPI_STATUSES_IGNORE);
    if (rank != 0 && mine)
        printf("rank %d: %d x %ld bytes in at %.3f us\n", rank, mine, bytes,
               (MPI_Wtime() - t0) * 1e6);
    free(buf);
    MPI_Finalize();
    return 0;
}
