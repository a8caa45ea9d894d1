/*
 * vmx.h - the VMX instructions (VMXON, VMREAD, VMWRITE, INVEPT, ...) as inline wrappers, for
 * vmm/ only (SDM ch. 31 "VMX Instruction Reference"); the architectural numbers are in
 * vmx_arch.h. No state here.
 */
#ifndef HVT_VMX_H
#define HVT_VMX_H
#include <stdint.h>
#include <stdbool.h>

#include "vmx_arch.h"

/* --- VMX instruction wrappers. Each returns true on success (CF=ZF=0, SDM 31.2). --- */
static inline bool vmx_on(uint64_t *phys)
{
    uint8_t fail;
    __asm__ volatile("vmxon %1; setna %0" : "=qm"(fail) : "m"(*phys) : "cc", "memory");
    return !fail;
}
static inline void vmx_off(void) { __asm__ volatile("vmxoff" ::: "cc", "memory"); }
static inline bool vmx_clear(uint64_t *phys)
{
    uint8_t fail;
    __asm__ volatile("vmclear %1; setna %0" : "=qm"(fail) : "m"(*phys) : "cc", "memory");
    return !fail;
}
static inline bool vmx_ptrld(uint64_t *phys)
{
    uint8_t fail;
    __asm__ volatile("vmptrld %1; setna %0" : "=qm"(fail) : "m"(*phys) : "cc", "memory");
    return !fail;
}
static inline uint64_t vmx_read(enum vmcs_field f)
{
    uint64_t v;
    __asm__ volatile("vmread %1, %0" : "=r"(v) : "r"((uint64_t)f) : "cc");
    return v;
}
static inline bool vmx_write(enum vmcs_field f, uint64_t v)
{
    uint8_t fail;
    __asm__ volatile("vmwrite %2, %1; setna %0" : "=qm"(fail) : "r"((uint64_t)f), "r"(v) : "cc");
    return !fail;
}
struct vmx_invept_desc { uint64_t eptp, reserved; };
#define INVEPT_SINGLE_CONTEXT 1
#define INVEPT_ALL_CONTEXT    2
static inline void vmx_invept(uint64_t type, uint64_t eptp)
{
    struct vmx_invept_desc d = { eptp, 0 };
    __asm__ volatile("invept %0, %1" :: "m"(d), "r"(type) : "cc", "memory");
}

/* INVVPID (SDM Vol. 3C 29.4.3.3 "Guidelines for Use of the INVVPID Instruction"; the
 * instruction in Vol. 2B): the descriptor holds the VPID in bits 15:0 and, for the
 * individual-address type only, a linear address. */
struct vmx_invvpid_desc { uint64_t vpid, addr; };
#define INVVPID_SINGLE_CONTEXT 1
#define INVVPID_ALL_CONTEXT    2
static inline void vmx_invvpid(uint64_t type, uint16_t vpid)
{
    struct vmx_invvpid_desc d = { vpid, 0 };
    __asm__ volatile("invvpid %0, %1" :: "m"(d), "r"(type) : "cc", "memory");
}

#endif
