/* SPDX-License-Identifier: BSD-3-Clause */
#include "memory.h"

#include "fm_build_config.h"

#if FM_HAVE_SMPI
/* Under SimGrid the program is loaded once per simulated process (dlopen), which jemalloc's
 * static thread-local storage does not allow: the C library's allocator there. */
#include <stdlib.h>
#include <string.h>

void *fm_mem_alloc_raw(size_t size)
{
    void *p = NULL;
    return posix_memalign(&p, 64, size ? size : 1) ? NULL : p;
}

void *fm_mem_alloc(size_t size)
{
    void *p = fm_mem_alloc_raw(size);
    if (p)
        memset(p, 0, size);
    return p;
}

void fm_mem_free(void *p)
{
    free(p);
}
#else
#include <jemalloc/jemalloc.h>
#include <pthread.h>

static unsigned arena;
static int arena_ok;
static pthread_once_t arena_once = PTHREAD_ONCE_INIT;

static void arena_create(void)
{
    size_t sz = sizeof arena;
    arena_ok = mallctl("arenas.create", &arena, &sz, NULL, 0) == 0;
}

static int flags(int zero)
{
    pthread_once(&arena_once, arena_create);
    /* Without its own arena fastmsg still works, from jemalloc's default ones. */
    return MALLOCX_ALIGN(64) | (zero ? MALLOCX_ZERO : 0) |
           (arena_ok ? MALLOCX_ARENA(arena) | MALLOCX_TCACHE_NONE : 0);
}

void *fm_mem_alloc(size_t size)
{
    return mallocx(size ? size : 1, flags(1));
}

void *fm_mem_alloc_raw(size_t size)
{
    return mallocx(size ? size : 1, flags(0));
}

void fm_mem_free(void *p)
{
    if (p)
        dallocx(p, arena_ok ? MALLOCX_TCACHE_NONE : 0);
}
#endif
