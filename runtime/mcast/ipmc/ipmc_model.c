/* SPDX-License-Identifier: BSD-3-Clause */
/* The two-stage multicast's time (ipmc_model.h), from the same LogGP costs as the trees'
 * model (costs.h): no tree to simulate, every member gets each chunk straight from the root. */
#include "ipmc_model.h"

#include "costs.h"
#include "ipmc_wire.h"

static double most(double a, double b)
{
    return a > b ? a : b;
}

double fm_ipmc_model(const struct fm_costs *c, int n, double share, size_t bytes, double loss)
{
    if (n < 2)
        return 0;
    double m = (double)fm_ipmc_chunks(bytes, FM_IPMC_MODEL_CHUNK);
    double chunk = bytes < FM_IPMC_MODEL_CHUNK ? (double)bytes : FM_IPMC_MODEL_CHUNK;
    double wire = (double)bytes + m * FM_IPMC_WIRE_EXTRA;
    share = share < 1 ? 1 : share;
    /* The root: its stream's copy, then a send per chunk. */
    double send_one = c->send_pkt + chunk * c->send_byte;
    double root = (double)bytes * c->fill_byte + m * send_one;
    /* Its link, beyond the shaper's burst. */
    double link = c->gap_byte * most(0, wire - c->burst);
    /* A member: a receive per chunk and the handler's copy. */
    double recv_one = c->recv_pkt + chunk * c->recv_byte;
    double member = m * recv_one + (double)bytes * c->copy_byte;
    double pace = most(most(root, link), member) * share;
    double T = c->wake + c->latency + pace + send_one + recv_one;
    if (loss > 0) /* the lost chunks, asked for at the last datagram, from the predecessor */
        T += 2 * c->latency + c->send_msg +
             loss * (double)bytes * (c->send_byte + c->gap_byte + c->recv_byte);
    return T;
}
