/* fastmsg's own memory: a dedicated jemalloc arena for packet slabs and overflow buffers, so
 * the runtime's allocations neither fragment nor contend with the application's heap. */
#ifndef FM_MEMORY_H
#define FM_MEMORY_H

#include <stddef.h>

void *fm_mem_alloc(size_t size); /* 64-byte aligned, zeroed; NULL when out of memory */
void fm_mem_free(void *p);
#endif
