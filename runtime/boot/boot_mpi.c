/* SPDX-License-Identifier: BSD-3-Clause */
/* Bootstrap over MPI (FM_BOOTSTRAP=mpi, built with an MPI compiler: meson -Dmpi=enabled):
 * rank and size of MPI_COMM_WORLD, and the put/fence/get exchange as one MPI_Allgatherv per
 * fence. This is how fastmsg runs under SimGrid's SMPI, where each simulated process also
 * learns its simulated host's name (host). MPI is initialized here unless the program did
 * it first, and then finalized here too. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "boot_backend.h"
#include "fastmsg.h"
#include "fm_build_config.h"

typedef struct boot_mpi {
    MPI_Comm comm;
    int we_init;         /* MPI_Init was ours: so is MPI_Finalize */
    unsigned char *mine; /* puts since the last fence: records (below) */
    size_t mine_len, mine_cap;
    unsigned char *all; /* every rank's records from the last fence */
    int *off, *len;     /* rank r's records: all + off[r], len[r] bytes */
} boot_mpi;

/* A record: key length (1 byte), key, value length (4 bytes), value. */
static int append(boot_mpi *m, const char *key, const void *val, size_t len)
{
    size_t klen = strlen(key), need = 1 + klen + 4 + len;
    if (m->mine_len + need > m->mine_cap) {
        size_t cap = 2 * (m->mine_len + need);
        unsigned char *p = realloc(m->mine, cap);
        if (!p)
            return FM_ERR_NOMEM;
        m->mine = p;
        m->mine_cap = cap;
    }
    unsigned char *p = m->mine + m->mine_len;
    uint32_t l = (uint32_t)len;
    p[0] = (unsigned char)klen;
    memcpy(p + 1, key, klen);
    memcpy(p + 1 + klen, &l, 4);
    memcpy(p + 5 + klen, val, len);
    m->mine_len += need;
    return FM_OK;
}

static int boot_mpi_init(fm_boot *b)
{
    boot_mpi *m = calloc(1, sizeof *m);
    int up = 0;
    if (!m)
        return fm_boot_fail(b, FM_ERR_NOMEM, "mpi bootstrap: out of memory");
    b->priv = m;
    MPI_Initialized(&up);
    if (!up) {
        if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
            return fm_boot_fail(b, FM_ERR_BOOTSTRAP, "mpi bootstrap: MPI_Init failed");
        m->we_init = 1;
    }
    /* Collectives alone: they never match the program's point-to-point messages. (A
     * duplicate would cost SMPI an allgather around the ring.) */
    m->comm = MPI_COMM_WORLD;
    MPI_Comm_rank(m->comm, &b->rank);
    MPI_Comm_size(m->comm, &b->size);
    m->off = calloc((size_t)b->size, sizeof *m->off);
    m->len = calloc((size_t)b->size, sizeof *m->len);
    if (!m->off || !m->len)
        return fm_boot_fail(b, FM_ERR_NOMEM, "mpi bootstrap: out of memory for %d ranks", b->size);
    /* The job key from rank 0. Simulated runs take a fixed one, so that two runs of the same
     * simulation are the same run (and SMPI's MPI_Bcast may first map the communicator's
     * hosts with an allgather around the ring). */
    uint64_t key = 0x5eed5eed5eed5eedULL;
#if !FM_HAVE_SMPI
    if (b->rank == 0)
        while (getrandom(&key, sizeof key, 0) != sizeof key || key == 0)
            ;
    MPI_Bcast(&key, 1, MPI_UINT64_T, 0, m->comm);
#endif
    b->job_key = key;
    return FM_OK;
}

static int boot_mpi_put(fm_boot *b, const char *key, const void *val, size_t len)
{
    if (append(b->priv, key, val, len))
        return fm_boot_fail(b, FM_ERR_NOMEM, "mpi bootstrap: out of memory storing '%s'", key);
    return FM_OK;
}

/* Every rank's puts to every rank; they replace the last fence's. */
static int boot_mpi_fence(fm_boot *b)
{
    boot_mpi *m = b->priv;
    if (m->mine_len > INT32_MAX)
        return fm_boot_fail(b, FM_ERR_TOO_LONG, "mpi bootstrap: %zu bytes put", m->mine_len);
    int n = (int)m->mine_len;
    if (MPI_Allgather(&n, 1, MPI_INT, m->len, 1, MPI_INT, m->comm) != MPI_SUCCESS)
        return fm_boot_fail(b, FM_ERR_BOOTSTRAP, "mpi bootstrap: MPI_Allgather failed");
    size_t total = 0;
    for (int r = 0; r < b->size; r++) {
        if (total + (size_t)m->len[r] > INT32_MAX)
            return fm_boot_fail(b, FM_ERR_TOO_LONG, "mpi bootstrap: over 2 GiB put in all");
        m->off[r] = (int)total;
        total += (size_t)m->len[r];
    }
    free(m->all);
    m->all = malloc(total ? total : 1);
    if (!m->all)
        return fm_boot_fail(b, FM_ERR_NOMEM, "mpi bootstrap: out of memory (%zu bytes)", total);
    if (MPI_Allgatherv(m->mine, n, MPI_BYTE, m->all, m->len, m->off, MPI_BYTE, m->comm) !=
        MPI_SUCCESS)
        return fm_boot_fail(b, FM_ERR_BOOTSTRAP, "mpi bootstrap: MPI_Allgatherv failed");
    m->mine_len = 0;
    return FM_OK;
}

static int boot_mpi_get(fm_boot *b, int rank, const char *key, void *val, size_t *len)
{
    boot_mpi *m = b->priv;
    size_t klen = strlen(key);
    const unsigned char *p = m->all + m->off[rank], *end = p + m->len[rank];
    while (p < end) {
        uint32_t l;
        memcpy(&l, p + 1 + p[0], 4);
        if (p[0] == klen && !memcmp(p + 1, key, klen)) {
            if (l > *len) {
                *len = l;
                return fm_boot_fail(b, FM_ERR_TOO_LONG,
                                    "mpi bootstrap: '%s' of rank %d is %u "
                                    "bytes",
                                    key, rank, l);
            }
            memcpy(val, p + 5 + p[0], l);
            *len = l;
            return FM_OK;
        }
        p += 5 + p[0] + l;
    }
    return fm_boot_fail(b, FM_ERR_BOOTSTRAP,
                        "rank %d published nothing under '%s' before the last fence", rank, key);
}

/* Under SimGrid the simulated host's name; elsewhere the host name fastmsg finds itself
 * (with its network namespace) is better than MPI's. */
#if FM_HAVE_SMPI
static int boot_mpi_host(fm_boot *b, char *buf, size_t len)
{
    char name[MPI_MAX_PROCESSOR_NAME];
    int n = 0;
    (void)b;
    if (MPI_Get_processor_name(name, &n) != MPI_SUCCESS || (size_t)n + 1 > len)
        return FM_ERR_BOOTSTRAP;
    snprintf(buf, len, "%s", name);
    return FM_OK;
}
#endif

static void boot_mpi_abort(fm_boot *b, int code, const char *msg)
{
    fprintf(stderr, "fastmsg[%d]: abort(%d): %s\n", b->rank, code, msg ? msg : "");
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code ? code : 1);
    abort(); /* MPI_Abort returned */
}

static void boot_mpi_fini(fm_boot *b)
{
    boot_mpi *m = b->priv;
    if (!m)
        return;
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin && m->we_init)
        MPI_Finalize();
    free(m->mine);
    free(m->all);
    free(m->off);
    free(m->len);
    free(m);
    b->priv = NULL;
}

const struct fm_boot_ops fm_boot_mpi_ops = {
    .name = "mpi",
    .init = boot_mpi_init,
    .put_bin = boot_mpi_put,
    .fence = boot_mpi_fence,
    .get_bin = boot_mpi_get,
#if FM_HAVE_SMPI
    .host = boot_mpi_host,
#endif
    .abort = boot_mpi_abort,
    .fini = boot_mpi_fini,
};
