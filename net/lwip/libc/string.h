/* string.h for lwIP inside the hypervisor: the freestanding subset vmm/lib provides. */
#ifndef HVT_NET_LWIP_STRING_H
#define HVT_NET_LWIP_STRING_H
#include "hv_api.h"
#endif
