/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg's own memory: a dedicated jemalloc arena for packet slabs and overflow buffers, so
 * the runtime's allocations neither fragment nor contend with the application's heap. */
#ifndef FM_MEMORY_H
#define FM_MEMORY_H

#include <stddef.h>

void *fm_mem_alloc(size_t size); /* 64-byte aligned, zeroed; NULL when out of memory */
/* Not zeroed: for buffers about to be overwritten whole (zero-copy bounce buffers). */
void *fm_mem_alloc_raw(size_t size);
void fm_mem_free(void *p);
#endif
