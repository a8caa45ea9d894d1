/*
 * d_consume_priv.h - what the consumer's files share: d_records.c (lookups, decoding, d_say),
 * d_print.c (printing a record, errors) and d_consume.c (setup, the record walk), which depend
 * on each other in that order only. Not for other files.
 *
 * Contract: d_decode() checks a DATA record's body whole against its clause and leaves its
 * actions in c->acts and their values in c->vals (strings point into the record); only then
 * does d_do_data() print anything.
 */
#ifndef HVT_D_CONSUME_PRIV_H
#define HVT_D_CONSUME_PRIV_H
#include "d_consume.h"

#define HDR ((uint32_t)sizeof(struct hvt_drec))
#define STACK_FRAMES 128
#define PF_ERRS_SHOWN 5   /* a format that does not fit its values is the compiler's bug:
                             say so a few times, not per record */

typedef struct {
    int act;              /* index in the clause's acts */
    int v0, nv;           /* its values in c->vals */
    const uint8_t *blob;  /* stack(): the bytes; ustack(): the pcs (u64 each) */
    uint32_t bloblen;     /* stack(): bytes; ustack(): pcs */
    uint64_t rsp;
} dact;

typedef struct {
    int indent;
    int have_last;
    uint32_t last_probe;
    uint16_t last_clause;
} dflow;

typedef struct {
    uint32_t probe;
    uint16_t clause;
    uint32_t epid;
} depid;

struct d_consumer {
    const dprog *p;
    d_consume_cfg cfg;
    d_out *out, *err;
    d_aggs *aggs;
    uint32_t strsize;
    int quiet, flowindent;
    int rawbytes;         /* trace() and string keys as hex dumps */
    int stackindent;      /* spaces before a stack frame */
    d_aggopt aopt;
    int heading;
    int exited, status;
    int pf_errs;
    int *probe_by_id;     /* indexes of p->probes sorted by id */
    depid *epids;
    uint32_t nepids;
    dflow *flow;
    uint32_t nflow;
    d_value *vals;
    uint32_t vcap;
    dact *acts;
    uint32_t acap;
};


/* d_records.c */
/* "hvt: " + the message + a newline on the error output */
void d_say(d_consumer *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const d_probe *d_probe_of(const d_consumer *c, uint32_t id);
/* The order of c->epids: by probe, then clause (qsort/bsearch) */
int d_epid_cmp(const void *a, const void *b);
/* DTrace's enabled probe id of (probe, clause) */
uint32_t d_epid_of(const d_consumer *c, uint32_t probe, uint16_t clause);
/* The probe's id as DTrace shows it: the program's BEGIN, END and ERROR (the image header
 * names them) are dtrace's 1, 2 and 3, as the hypervisor's `id` reads them */
uint32_t d_dtrace_id_of(const d_consumer *c, uint32_t probe);
dflow *d_flow_of(d_consumer *c, unsigned cpu);
/* The actions of a DATA record's body: their count, or -1 with why. */
int d_decode(d_consumer *c, const d_clause *cl, const uint8_t *b, uint32_t len, char *why, size_t wn);
/* d_print.c; next: the record after this one in its buffer (for -F), or NULL */
int d_do_data(d_consumer *c, const struct hvt_drec *r, const uint8_t *body, const struct hvt_drec *next);
int d_do_error(d_consumer *c, const struct hvt_drec *r);

#endif
