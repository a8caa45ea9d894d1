/* lwip_port.c - what lwIP (NO_SYS) needs from the hypervisor: a millisecond clock, a random
 * source for initial sequence numbers and ports, and its heap (see lwipopts.h). */
#include "net_internal.h"
#include "lwip/sys.h"

unsigned char *net_lwip_heap;
static uint64_t port_tsc_per_ms = 1000000;
static uint64_t rand_state;

void net_lwip_port_init(uint64_t tsc_per_ms, void *heap)
{
    port_tsc_per_ms = tsc_per_ms ? tsc_per_ms : 1;
    net_lwip_heap = heap;
    rand_state = hv_rdtsc() | 1;
}

u32_t sys_now(void)
{
    return (u32_t)(hv_rdtsc() / port_tsc_per_ms);
}

/* xorshift64*: not cryptographic; lwIP only needs unpredictable-enough ISNs and ports. */
uint32_t net_lwip_rand(void)
{
    rand_state ^= rand_state >> 12;
    rand_state ^= rand_state << 25;
    rand_state ^= rand_state >> 27;
    return (uint32_t)((rand_state * 0x2545f4914f6cdd1dull) >> 32);
}
