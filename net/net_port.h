/*
 * net_port.h - what the portable net/ modules (sha256, aead, ctl, stream_core, net_config) need from
 * their environment. They are built twice: freestanding into the hypervisor (the default, over
 * vmm/hv_api.h) and for the host tools and tests (-DHVT_HOST, over the C library), so the
 * collector's tests and fuzzers exercise exactly the code the hypervisor runs.
 */
#ifndef HVT_NET_PORT_H
#define HVT_NET_PORT_H
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#ifdef HVT_HOST
#include <string.h>
#else
#include "hv_api.h"
#endif

/* A test-and-set spinlock; pause keeps a spinning hyperthread polite. */
typedef struct { volatile uint32_t v; } net_spinlock;
static inline bool net_trylock(net_spinlock *l)
{
    return __atomic_exchange_n(&l->v, 1u, __ATOMIC_ACQUIRE) == 0;
}
static inline void net_lock(net_spinlock *l)
{
    while (!net_trylock(l))
        while (__atomic_load_n(&l->v, __ATOMIC_RELAXED))
            __asm__ volatile("pause");
}
static inline void net_unlock(net_spinlock *l) { __atomic_store_n(&l->v, 0u, __ATOMIC_RELEASE); }

#endif
