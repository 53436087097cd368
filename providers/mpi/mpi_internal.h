/* SPDX-License-Identifier: BSD-3-Clause */
/* The mpi provider's state, shared by its files: a communicator of its own, and one table of
 * outstanding MPI requests (posted receives and sends) that poll tests in one call. */
#ifndef FM_MPI_INTERNAL_H
#define FM_MPI_INTERNAL_H

#include <mpi.h>
#include <stddef.h>

#include "transport.h"

#define FM_MPI_TAG_PKT  1 /* every packet: MPI keeps one sender's packets in order */
#define FM_MPI_TAG_TICK 2 /* under SimGrid: poll's zero-byte message to itself (mpi_requests.c) */
/* At most this many places a region (larger places past it). Every posted receive costs MPI
 * (SMPI walks a rank's outstanding requests on each completion): 1 MiB of 64-byte packets
 * would be 10,000 receives a rank. What does not find a place waits in MPI's own unexpected
 * queue, so fewer places lose nothing. */
#define FM_MPI_MAX_PLACES 32
/* At most this many places posted at once, over all regions; the others are posted as places
 * take messages. A rank has few senders at a time, each within its credits, and SMPI's work
 * per completion and per wait grows with the requests outstanding (at 16 KiB packets the
 * receive pool was 256 places a rank). */
#define FM_MPI_MAX_POSTED 64

/* A multi-receive region: MPI cannot pack messages one after the other into a buffer, so a
 * region is cut into places of at least the largest packet's size, an MPI_Irecv each; the
 * region is released once every place has taken a message. */
typedef struct fm_mpi_region {
    void *ctx, *buf;
    size_t each; /* bytes of each place */
    /* places: how many it has (cut to those posted when the rest never will be: an error, or
     * close); posted so far; landed: those that took a message (or were cancelled) */
    int places, posted, landed;
    struct fm_mpi_region *next; /* the next region with places still to post */
} fm_mpi_region;

/* What one outstanding request is for. */
typedef struct fm_mpi_slot {
    void *ctx;
    void *buf;   /* the caller's buffer (the event's buf) */
    void *stage; /* sendv: the two parts joined, freed at completion */
    size_t len;
    int kind;              /* FM_TP_SEND_DONE, FM_TP_RECV_DONE or FM_TP_RECV_MULTI */
    fm_mpi_region *region; /* RECV_MULTI: the region of this place */
} fm_mpi_slot;

typedef struct fm_mpi_tp {
    fm_tp base;
    MPI_Comm comm; /* a duplicate of MPI_COMM_WORLD: no other traffic matches ours (under
                    * SimGrid MPI_COMM_WORLD itself, mpi_transport.c says why) */
    int self;      /* this process's rank in comm */
    int n;         /* the job's ranks (after connect) */
    int *rank_of;  /* fastmsg rank -> rank in comm */
    /* The request table: free slots hold MPI_REQUEST_NULL, which MPI_Testsome skips. */
    MPI_Request *reqs;
    fm_mpi_slot *slots;
    int cap, hi;    /* capacity; slots at or above hi are all free */
    int *free_list; /* free slot numbers below hi */
    int nfree;
    int *idx;             /* MPI_Testsome's indices (cap) */
    MPI_Status *st;       /* and statuses (cap) */
    MPI_Request *wreqs;   /* under SimGrid: the table and the tick, for MPI_Waitany (cap + 1) */
    MPI_Request tick[2];  /* under SimGrid: its receive and send, or MPI_REQUEST_NULL */
    fm_tp_event *ready;   /* completions found but not yet returned by poll (cap) */
    int nready, ready_at; /* queued, and the first not yet returned */
    size_t place;         /* bytes of a region's place (fm_tp_config.multi_recv_min) */
    fm_mpi_region *pend, *pend_last; /* regions with places not yet posted, oldest first */
    int places_posted;               /* places posted and not yet complete */
    double cost_send, cost_recv;     /* simulated seconds charged per packet (SimGrid builds) */
} fm_mpi_tp;

static inline fm_mpi_tp *fm_mpi_of(fm_tp *tp)
{
    return (fm_mpi_tp *)tp;
}

/* mpi_requests.c */
int fm_mpi_table_init(fm_mpi_tp *t, int cap);
void fm_mpi_table_free(fm_mpi_tp *t);
void fm_mpi_drop_pending(fm_mpi_tp *t);
int fm_mpi_send(fm_tp *tp, int dest, const void *buf, size_t len, fm_tp_mr *mr, void *ctx);
int fm_mpi_sendv(fm_tp *tp, int dest, const void *hdr, size_t hlen, fm_tp_mr *hmr,
                 const void *payload, size_t plen, fm_tp_mr *pmr, void *ctx);
int fm_mpi_post_recv(fm_tp *tp, void *buf, size_t len, fm_tp_mr *mr, void *ctx);
int fm_mpi_post_recv_multi(fm_tp *tp, void *buf, size_t len, fm_tp_mr *mr, void *ctx);
int fm_mpi_poll(fm_tp *tp, fm_tp_event *ev, int max);
int fm_mpi_block(fm_tp *tp, double timeout_s);
int fm_mpi_trywait(fm_tp *tp);
void fm_mpi_cancel_all(fm_mpi_tp *t);

#endif
