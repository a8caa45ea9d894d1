/*
 * exit_reg.h - vmm/'s side of hv_exit.h: the handler tables the exit dispatch (vmx_exit.c)
 * reads. Filled by registration while the image starts; read-only afterwards, except the EPT
 * ranges, which a module may add while CPUs run (entries are published atomically).
 */
#ifndef HVT_EXIT_REG_H
#define HVT_EXIT_REG_H
#include "hv_exit.h"

#define EXIT_REG_OBSERVERS 8

struct exit_reg {
    hv_exit_fn exit[EXIT_REASON_COUNT];          /* lent reasons; NULL = nobody */
    hv_exit_fn quick[EXIT_REASON_COUNT];         /* their quick handlers (no observers) */
    hv_hypercall_fn hypercall[HV_HYPERCALL_MAX];
    uint8_t hc_priv[HV_HYPERCALL_MAX];           /* enum hv_hc_priv */
    uint64_t hc_refused[HV_HYPERCALL_MAX];       /* callers refused (#UD), per function */
    hv_hc_admin_fn hc_admin;
    hv_observer_fn pre[EXIT_REG_OBSERVERS], post[EXIT_REG_OBSERVERS];
    unsigned nobservers;
};
extern struct exit_reg exit_reg;

hv_io_fn        exit_reg_io(uint16_t port);
hv_msr_fn       exit_reg_msr(uint32_t msr);
/* The EPT-range handlers that cover gpa, newest first, until one handles the violation. */
bool            exit_reg_ept(uint64_t gpa, uint64_t qualification);
void            exit_reg_power_off(void);         /* last registered first */
void            exit_reg_fatal(const char *why);
void            exit_reg_tsc_moved(int64_t delta); /* first registered first */
void            exit_reg_wake(void);              /* first registered first */
/* vmm/'s own port intercepts (no handler: the power-off port is vmm/'s). */
void            exit_reg_io_intercept(uint16_t port, unsigned width);
/* The fast MTF handler the exit stub jumps to (vmx_stub.asm), or NULL. */
extern void *hv_mtf_fast;

#endif
