/* stdlib.h for lwIP inside the hypervisor: atoi only (netif.c); no malloc (MEM_LIBC_MALLOC 0). */
#ifndef HVT_NET_LWIP_STDLIB_H
#define HVT_NET_LWIP_STDLIB_H
#include "hv_api.h"
#endif
