/* d_resolve: the compiler's probe resolver over a probe_list (see d_compile.h). */
#include "d_compile.h"
#include "probe_list.h"

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
