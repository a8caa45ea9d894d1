/* d_resolve: the compiler's probe resolver over a probe_list (see d_compile.h). */
#include "d_compile.h"
#include "probe_list.h"
#include "kimg.h"

int d_resolve_probe_list(void *ctx, const char *desc, d_probe_sink *sink, char *err, size_t errlen)
{
    probe_list *l = ctx;
    if (probe_desc_check(desc) < 0) {
        snprintf(err, errlen, "Overspecified probe description");
        return -1;
    }
    /* profile-N and tick-N exist once named, as in DTrace's profile provider */
    if (probe_list_add_profile(l, desc) < 0) {
        snprintf(err, errlen, "invalid profile rate or period");
        return -1;
    }
    for (size_t i = 0; i < l->n; i++) {
        const probe_desc *p = &l->p[i];
        if (probe_desc_match(p, desc)) d_probe_add(sink, p->id, p->provider, p->module, p->function, p->name);
    }
    return 0;
}

int d_resolve_kernel(void *ctx, const char *desc, d_probe_sink *sink, char *err, size_t errlen)
{
    d_kernel_resolver *kr = ctx;
    probe_list *l = kr->list;
    /* addr provider probes exist once named, as with hvt -n DESC; one instruction named as
     * SYM+OFF and as 0xADDRESS is one probe (the first name lists it) */
    uint32_t id = 0;
    if (kr->syms && kr->img && probe_list_add_addr_id(l, kr->syms, kr->img, desc, &id, err, errlen) < 0)
        return -1;
    if (id && id <= l->n && l->p[id - 1].id == id) {
        const probe_desc *p = &l->p[id - 1];
        d_probe_add(sink, p->id, p->provider, p->module, p->function, p->name);
        return 0;
    }
    return d_resolve_probe_list(l, desc, sink, err, errlen);
}
