/* SPDX-License-Identifier: BSD-3-Clause */
/* Fuzz target: the multicast descriptor (mcast_desc.c) and the children every member computes
 * from it (trees/), the way forward.c does on packet 0 of a multicast.
 *
 * Input: 2 bytes (little-endian) giving the job size nranks - 1, then the bytes of packet 0's
 * payload, descriptor first. A descriptor that decodes must re-encode to its own bytes; then
 * every member (or, for large trees, a sample) asks for its children and parent, and the
 * answers must form one tree over the members, consistent with fm_tree_layout. */
#include <string.h>

#include "fastmsg.h"
#include "fuzz.h"
#include "mcast_desc.h"
#include "trees/tree.h"
#include "wire.h"

/* Members up to which every position is asked and the whole tree checked; past it, a sample
 * (postal costs O(n) per call, so all positions would be O(n^2)). */
#define FULL_CHECK_MAX 128
#define SAMPLE         8

static void check_reencode(const fm_mcast_desc *d, const uint8_t *bytes)
{
    int list = !(d->flags & FM_DESC_GROUP);
    size_t len = fm_mcast_desc_len(d);
    FUZZ_CHECK(len == d->desc_len);
    int *members = NULL;
    if (list) {
        members = malloc(d->n * sizeof *members);
        FUZZ_CHECK(members);
        for (uint32_t i = 0; i < d->n; i++)
            members[i] = fm_mcast_desc_member(d, i);
    }
    unsigned char *out = malloc(len);
    FUZZ_CHECK(out);
    fm_mcast_desc_encode(d, members, out);
    FUZZ_CHECK(!memcmp(out, bytes, len));
    free(out);
    free(members);
}

/* Children and parent of pos, checked against each other (the parents of the first
 * max_parents children only: a postal parent call is O(n)); returns the child count. */
static int check_member(const struct fm_tree_desc *td, int pos, void *scratch, int *kids,
                        unsigned char *mark, int max_parents)
{
    int parent = -2;
    FUZZ_CHECK(fm_tree_parent(td, pos, scratch, &parent) == FM_OK);
    if (pos == td->root)
        FUZZ_CHECK(parent == -1);
    else
        FUZZ_CHECK(parent >= 0 && parent < td->n && parent != pos);
    int nk = fm_tree_children(td, pos, NULL, 0, scratch);
    FUZZ_CHECK(nk >= 0 && nk <= td->n - 1);
    FUZZ_CHECK(fm_tree_children(td, pos, kids, nk, scratch) == nk);
    for (int i = 0; i < nk; i++) {
        int c = kids[i], cp = -2;
        FUZZ_CHECK(c >= 0 && c < td->n && c != pos && c != td->root);
        FUZZ_CHECK(!mark[c]); /* no member is anyone's child twice */
        mark[c] = 1;
        if (i < max_parents)
            FUZZ_CHECK(fm_tree_parent(td, c, scratch, &cp) == FM_OK && cp == pos);
    }
    return nk;
}

static void check_tree(const struct fm_tree_desc *td, uint32_t seed)
{
    size_t scratch_len = fm_tree_scratch_size(td);
    void *scratch = scratch_len ? malloc(scratch_len) : NULL;
    int *kids = malloc((size_t)td->n * sizeof *kids);
    unsigned char *mark = calloc((size_t)td->n, 1);
    FUZZ_CHECK((scratch || !scratch_len) && kids && mark);
    if (td->n <= FULL_CHECK_MAX) {
        int edges = 0;
        for (int pos = 0; pos < td->n; pos++)
            edges += check_member(td, pos, scratch, kids, mark, td->n);
        FUZZ_CHECK(edges == td->n - 1); /* with the marks: every non-root exactly once */
        /* The whole-tree call must agree with the per-member calls. */
        int *first = malloc(((size_t)td->n + 1) * sizeof *first);
        int *all = malloc((size_t)(td->n > 1 ? td->n - 1 : 1) * sizeof *all);
        FUZZ_CHECK(first && all);
        FUZZ_CHECK(fm_tree_layout(td, first, all) == FM_OK);
        for (int pos = 0; pos < td->n; pos++) {
            int nk = fm_tree_children(td, pos, kids, td->n, scratch);
            FUZZ_CHECK(first[pos + 1] - first[pos] == nk);
            FUZZ_CHECK(!memcmp(all + first[pos], kids, (size_t)nk * sizeof *kids));
        }
        free(first);
        free(all);
    } else {
        int pos[SAMPLE] = {td->root, (td->root + 1) % td->n, 0, td->n - 1};
        for (int i = 4; i < SAMPLE; i++) {
            seed = seed * 1103515245u + 12345u;
            pos[i] = (int)(seed % (uint32_t)td->n);
        }
        for (int i = 0; i < SAMPLE; i++) {
            memset(mark, 0, (size_t)td->n);
            check_member(td, pos[i], scratch, kids, mark, SAMPLE);
        }
    }
    free(mark);
    free(kids);
    free(scratch);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    int nranks = 1 + fm_get16(data);
    const uint8_t *buf = data + 2; /* the payload ends where the input does */
    size_t len = size - 2;
    unsigned char *seen = calloc((size_t)nranks, 1);
    int *set_out = malloc(sizeof(int) * (size_t)nranks);
    FUZZ_CHECK(seen && set_out);
    fm_mcast_desc d;
    if (fm_mcast_desc_decode(buf, len, nranks, seen, set_out, &d) == 0) {
        int list = !(d.flags & FM_DESC_GROUP);
        FUZZ_CHECK(d.desc_len >= FM_DESC_FIXED && d.desc_len <= len);
        FUZZ_CHECK(fm_tree_builder_get(d.builder) && d.n >= 1 && d.root_pos < d.n);
        FUZZ_CHECK(d.root_rank < (uint32_t)nranks);
        FUZZ_CHECK((d.flags & (FM_DESC_STORE_FORWARD | FM_DESC_FCFS)) !=
                   (FM_DESC_STORE_FORWARD | FM_DESC_FCFS)); /* one forwarding mode at most */
        FUZZ_CHECK(!list                   ? !d.members && !d.set && d.group
                   : d.flags & FM_DESC_SET ? d.set == set_out && !d.members && !d.group
                                           : d.members == buf + FM_DESC_FIXED && !d.set);
        for (uint32_t i = 1; d.set && i < d.n; i++)
            FUZZ_CHECK(d.set[i - 1] < d.set[i]); /* a set: ascending */
        if (list) {
            FUZZ_CHECK(d.n <= (d.set ? (uint32_t)nranks : FM_DESC_MAX_LIST) &&
                       d.n <= (uint32_t)nranks);
            for (uint32_t i = 0; i < d.n; i++) {
                uint32_t r = (uint32_t)fm_mcast_desc_member(&d, i);
                FUZZ_CHECK(r < (uint32_t)nranks && !seen[r]);
                seen[r] = 1;
            }
            FUZZ_CHECK((uint32_t)fm_mcast_desc_member(&d, d.root_pos) == d.root_rank);
            for (uint32_t i = 0; i < d.n; i++)
                seen[fm_mcast_desc_member(&d, i)] = 0;
        }
        for (int r = 0; r < nranks; r++)
            FUZZ_CHECK(!seen[r]); /* the decoder leaves its scratch clean */
        check_reencode(&d, buf);

        /* forward.c's tree: a group descriptor is used only when it names a group of d.n
         * members, so at most nranks; it refuses parameters over a million. */
        struct fm_tree_desc td = {.builder = d.builder,
                                  .param = (int)d.param,
                                  .n = (int)d.n,
                                  .root = (int)d.root_pos,
                                  .m = 1,
                                  .lambda = d.lambda_milli / 1000.0};
        if (d.n <= (uint32_t)nranks && d.param <= 1000000 && fm_tree_check(&td) == FM_OK)
            check_tree(&td, fm_get32(buf + 4) ^ d.n);
    }
    free(seen);
    free(set_out);
    return 0;
}
