/* SPDX-License-Identifier: BSD-3-Clause */
/* The segments: this rank's (a memfd and a bell pipe, made at open) and its peers' (taken
 * from their processes at connect, then mapped). The bell is a pipe rather than an eventfd
 * because a pipe also opens through /proc/PID/fd where pidfd_getfd is refused or missing. A memfd
 * has no name: when the last process that maps it ends, killed or not, the kernel frees it, and
 * /dev/shm never sees it. */
#include "sm_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fastmsg.h"
#include "log.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

static size_t align_line(size_t x)
{
    return (x + FM_SM_LINE - 1) & ~(size_t)(FM_SM_LINE - 1);
}

/* Rings of a power of two bytes, smaller as more ranks share the host, so that a segment's
 * rings stay under FM_SM_SEG_RINGS_BUDGET from 256 ranks down (and each is at least
 * FM_SM_RING_MIN: a bounded queue per peer). */
void fm_sm_layout_for(fm_sm_layout *l, uint32_t nslots)
{
    uint32_t ring = FM_SM_RING_MAX;
    while (ring > FM_SM_RING_MIN && (size_t)ring * nslots > FM_SM_SEG_RINGS_BUDGET)
        ring /= 2;
    l->nslots = nslots;
    l->ring_bytes = ring;
    l->nchunks = FM_SM_NCHUNKS;
    l->chunk_bytes = FM_SM_CHUNK_BYTES;
    l->ctl_off = align_line(sizeof(fm_sm_seg_hdr));
    l->flags_off = l->ctl_off + (size_t)nslots * sizeof(fm_sm_ring_ctl);
    l->rings_off = l->flags_off + (size_t)l->nchunks * sizeof(fm_sm_chunk_flag);
    l->chunks_off = l->rings_off + (size_t)nslots * ring;
    l->bytes = l->chunks_off + (size_t)l->nchunks * l->chunk_bytes;
}

int fm_sm_segment_create(fm_sm_tp *t, uint32_t nslots, const char *name, char *err, size_t errlen)
{
    char label[96];
    fm_sm_layout_for(&t->lay, nslots);
    snprintf(label, sizeof label, "fastmsg-sm:%s", name ? name : "");
    t->memfd = memfd_create(label, MFD_CLOEXEC);
    if (t->memfd < 0) {
        snprintf(err, errlen, "sm: memfd_create: %s", strerror(errno));
        return FM_ERR_PROVIDER;
    }
    if (ftruncate(t->memfd, (off_t)t->lay.bytes) != 0) {
        snprintf(err, errlen, "sm: a segment of %zu bytes: %s", t->lay.bytes, strerror(errno));
        return FM_ERR_NOMEM;
    }
    void *m = mmap(NULL, t->lay.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, t->memfd, 0);
    if (m == MAP_FAILED) {
        snprintf(err, errlen, "sm: mmap of %zu bytes: %s", t->lay.bytes, strerror(errno));
        return FM_ERR_NOMEM;
    }
    t->seg = m;
    t->hdr = m;
    if (pipe2(t->bell, O_NONBLOCK | O_CLOEXEC) != 0) {
        snprintf(err, errlen, "sm: pipe2: %s", strerror(errno));
        return FM_ERR_PROVIDER;
    }
    fm_sm_seg_hdr *h = t->hdr;
    h->magic = FM_SM_MAGIC;
    h->version = FM_SM_VERSION;
    h->nslots = nslots;
    h->ring_bytes = t->lay.ring_bytes;
    h->nchunks = t->lay.nchunks;
    h->chunk_bytes = t->lay.chunk_bytes;
    h->pid = (int32_t)getpid();
    h->seg_bytes = t->lay.bytes;
    h->nonce = t->nonce;
    h->self_addr = (uint64_t)(uintptr_t)m;
    return FM_OK;
}

/* Another process's descriptor fd: pidfd_getfd (it needs the right to ptrace the process:
 * the same user, no Yama restriction), else opening /proc/PID/fd/FD, which needs less (and
 * is all there is where pidfd_open is missing, as under valgrind 3.19). */
static int take_fd(int pidfd, pid_t pid, int fd, int flags)
{
    int got = pidfd >= 0 ? (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0) : -1;
    if (got < 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, fd);
        got = open(path, flags | O_CLOEXEC);
    }
    return got;
}

/* A peer's segment is valid when it is the one its address names, in the shape this rank
 * computed for the host. */
static int segment_ok(const fm_sm_tp *t, const fm_sm_seg_hdr *h, const fm_sm_addr *a, size_t bytes)
{
    return bytes >= t->lay.bytes && h->magic == FM_SM_MAGIC && h->version == FM_SM_VERSION &&
           h->nonce == a->nonce && h->pid == a->pid && h->nslots == t->lay.nslots &&
           h->ring_bytes == t->lay.ring_bytes && h->nchunks == t->lay.nchunks &&
           h->chunk_bytes == t->lay.chunk_bytes && h->seg_bytes == t->lay.bytes;
}

int fm_sm_segment_attach(fm_sm_tp *t, const fm_sm_addr *a, fm_sm_peer *p, int rank)
{
    int rc = FM_OK, pidfd = -1, memfd = -1;
    p->bell = -1;
    if (a->pid == getpid() && a->nonce == t->nonce) { /* this rank: its own mapping */
        p->base = t->seg;
        p->bytes = 0;
        p->hdr = t->hdr;
        p->bell = t->bell[1];
        return FM_OK;
    }
    pidfd = (int)syscall(SYS_pidfd_open, (pid_t)a->pid, 0);
    FM_CHECK(pidfd >= 0 || errno != ESRCH, FM_ERR_PEER, "sm: rank %d (pid %d) has ended", rank,
             (int)a->pid);
    memfd = take_fd(pidfd, a->pid, a->memfd, O_RDWR);
    FM_CHECK(memfd >= 0, FM_ERR_PROVIDER, "sm: rank %d (pid %d): cannot take its segment: %s", rank,
             (int)a->pid, strerror(errno));
    struct stat st;
    FM_CHECK(fstat(memfd, &st) == 0, FM_ERR_PROVIDER, "sm: rank %d: fstat: %s", rank,
             strerror(errno));
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    FM_CHECK(m != MAP_FAILED, FM_ERR_NOMEM, "sm: rank %d: mmap of its segment: %s", rank,
             strerror(errno));
    p->base = m;
    p->bytes = (size_t)st.st_size;
    p->hdr = m;
    FM_CHECK(segment_ok(t, p->hdr, a, p->bytes), FM_ERR_PROVIDER,
             "sm: rank %d (pid %d): its segment is not the one its address names (another job, "
             "or another fastmsg version)",
             rank, (int)a->pid);
    p->bell = take_fd(pidfd, a->pid, a->bell, O_WRONLY | O_NONBLOCK);
    if (p->bell < 0)
        fm_log(1, "sm: rank %d: cannot take its bell (%s): it wakes by its own timeouts", rank,
               strerror(errno));
error:
    if (memfd >= 0)
        close(memfd);
    if (pidfd >= 0)
        close(pidfd);
    return rc;
}

/* Wake a peer that may sleep: flag is its sleeping or starved word. Only the writer that
 * clears the flag writes the bell, so a sleeper gets one wake per sleep. */
void fm_sm_ring_bell(fm_sm_peer *p, _Atomic uint32_t *flag)
{
    if (atomic_load_explicit(flag, memory_order_relaxed) &&
        atomic_exchange_explicit(flag, 0, memory_order_acq_rel) && p->bell >= 0) {
        char one = 1;
        ssize_t w = write(p->bell, &one, 1);
        (void)w; /* EAGAIN: the pipe is full, so it is readable already */
    }
}

void fm_sm_segment_close(fm_sm_tp *t)
{
    for (int r = 0; t->peers && r < t->n; r++) {
        fm_sm_peer *p = &t->peers[r];
        if (p->base && p->base != t->seg)
            munmap(p->base, p->bytes);
        if (p->bell >= 0 && p->bell != t->bell[1])
            close(p->bell);
    }
    if (t->seg)
        munmap(t->seg, t->lay.bytes);
    if (t->memfd >= 0)
        close(t->memfd);
    for (int i = 0; i < 2; i++)
        if (t->bell[i] >= 0)
            close(t->bell[i]);
}
