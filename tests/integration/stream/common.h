/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the stream tests: byte patterns, sizes, sending, and failure reporting.
 *
 * Byte 0 of every message is its index m (mod 256), so a receiver can tell messages apart
 * whatever order they arrive in; every other byte depends on sender, receiver, index and
 * offset. */
#ifndef STREAM_COMMON_H
#define STREAM_COMMON_H

#include <fastmsg.h>
#include <stddef.h>
#include <stdint.h>

/* The byte at offset off of message m from rank s to rank d. */
static inline unsigned char st_pat(int s, int d, int m, size_t off)
{
    if (off == 0)
        return (unsigned char)m;
    uint64_t x = (uint64_t)off * 0x9E3779B97F4A7C15ull;
    x ^= (uint64_t)s << 48 ^ (uint64_t)d << 32 ^ (uint64_t)m << 16;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return (unsigned char)x;
}

/* Fill buf with len bytes of message m (s -> d) starting at offset off. */
void st_fill(unsigned char *buf, size_t len, int s, int d, int m, size_t off);

/* Offset of the first byte of buf (len bytes at offset off of message m) that differs from
 * the pattern, or (size_t)-1 when all match. */
size_t st_mismatch(const unsigned char *buf, size_t len, int s, int d, int m, size_t off);

/* Odd piece/chunk sizes, used in turn: st_odd_size(i) for i = 0, 1, 2, ... */
size_t st_odd_size(unsigned i);

/* The FM_* size variable name as the runtime reads it (K, M, G suffixes), or dflt if unset. */
size_t st_env_size(const char *name, size_t dflt);

/* FM_PACKET_SIZE as the runtime reads it (default 64K). */
size_t st_packet_size(void);

/* Parse a size: a number with optional K/M suffix, P (the packet size), and + or - terms,
 * e.g. "P-1", "1M+7", "3P+5". Returns 0 and sets *ok = 0 on a bad token. */
size_t st_parse_size(const char *tok, int *ok);

/* Write bytes off..end-1 of message m (me -> d) to the open stream s, in odd pieces if odd,
 * else in one. Returns FM_OK or the first error. */
int st_send_range(fm_stream *s, int me, int d, int m, size_t off, size_t end, int odd);

/* Write len bytes of message m to the open stream s (to d) in pieces: odd sizes if odd,
 * else one piece. Returns FM_OK or the first error. */
int st_send_body(fm_stream *s, int me, int d, int m, size_t len, int odd);

/* FM_ZCOPY as the runtime reads it: pieces of at least this many bytes sent outside handlers
 * go zero-copy (default 32K; 0 = never). */
size_t st_zcopy_min(void);

/* Whether a piece of len bytes sent outside handlers goes zero-copy. */
int st_is_zcopy(size_t len);

/* Check fm_stats' zero-copy counters against the pieces this rank received and sent
 * zero-copy by the test's own count: equal when exact, else at least that many (and 0 when
 * none are expected). Failures are counted with st_fail; the counts are printed. */
void st_check_zcopy(fm_context *ctx, uint64_t want_in, uint64_t want_out, int exact);

/* Report a failure on stderr ("rank R: FAIL: ...") and count it. */
void st_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern int st_failures;
extern int st_rank;

/* A word from one rank to another of the same job on this host that needs no progress: a
 * rank that must drive none until another has seen something (a sleep would be a guess that
 * a slow machine loses) waits with st_go_wait for the other's st_go_say of the same name.
 * st_go_wait gives up after secs seconds; 0 when the word came, -1 when not (it says why). */
void st_go_say(fm_context *ctx, const char *name);
int st_go_wait(fm_context *ctx, const char *name, int secs);
/* Whether the word came (taking it when it did), without waiting. */
int st_go_seen(fm_context *ctx, const char *name);

/* fm_init or exit(1) with a message. */
fm_context *st_init(void);

/* Print "rank R: PASS what" or "rank R: FAIL what (k failures)", finalize, and return the
 * exit status. */
int st_finish(fm_context *ctx, const char *what);

#endif
