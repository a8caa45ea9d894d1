/*
 * arch/cc.h - lwIP's compiler/platform port for the hypervisor (x86-64, freestanding, GCC).
 * Diagnostics go to hv_log, assertions to hv_panic: an lwIP invariant broken inside the
 * hypervisor is a bug we want to see at once, not a silent corruption of the stream.
 */
#ifndef HVT_LWIP_ARCH_CC_H
#define HVT_LWIP_ARCH_CC_H
#include <stdint.h>
#include <stddef.h>
#include "hv_api.h"

#define LWIP_NO_INTTYPES_H 1     /* no <inttypes.h> in -nostdinc: formats below */
#define LWIP_NO_CTYPE_H    1
#define LWIP_NO_LIMITS_H   1     /* gcc's limits.h wants the libc one after it */
#define X8_F  "02x"
#define U16_F "u"
#define S16_F "d"
#define X16_F "x"
#define U32_F "u"
#define S32_F "d"
#define X32_F "x"
#define SZT_F "lu"

#ifndef BYTE_ORDER
#define BYTE_ORDER LITTLE_ENDIAN
#endif

#define LWIP_PLATFORM_DIAG(x)   do { hv_log x; } while (0)
#define LWIP_PLATFORM_ASSERT(x) hv_panic("lwip: assertion \"%s\" failed at %s:%d", x, __FILE__, __LINE__)

uint32_t net_lwip_rand(void);
#define LWIP_RAND() (net_lwip_rand())

#endif
