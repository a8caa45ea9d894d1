/*
 * dif_state.c - a loaded program's state in the caller's memory (dif.h): its size, its
 * layout (dif_impl.h), the drain of a CPU's principal buffer (and of its losses: every
 * counter as a record), the probe table's lookup.
 */
#include "dif_impl.h"

static size_t dif_align64(size_t n) { return (n + 63) & ~(size_t)63; }

/* Where everything goes, for dif_state_size (mem NULL) and dif_state_init alike, so the two
 * can never disagree. Offsets from the start of the caller's memory. */
struct dif_layout {
    size_t varpos, epids, lean, lean_ops, cpus, globals, dyn_hash, dyn, specs, cpu0, cpu_stride, total;
    size_t buf, agg_hash, agg, scratch, locals, local_gen, specbufs, specdata; /* a CPU's */
    uint32_t bufsize, aggsize, agg_nhash, dyn_chunk, dyn_nhash, dyn_nchunks, nlocals;
    uint32_t nspec, specsize;
};

static void dif_layout(const struct hvt_dif_hdr *h, const struct hvt_dif_var *vars,
                       unsigned ncpus, struct dif_layout *L)
{
    size_t o = dif_align64(sizeof(struct dif_state));
    size_t globals = 0, locals = 0;
    uint32_t nlocals = 0;
    for (uint32_t i = 0; i < h->nvars; i++) {
        size_t size = (size_t)dif_var_bytes(&vars[i], h->strsize);
        if (vars[i].kind == HVT_DIF_VK_GLOBAL)
            globals += size;
        else if (vars[i].kind == HVT_DIF_VK_LOCAL)
            locals += size, nlocals++;
    }
    L->nlocals = nlocals;
    L->varpos = o;
    o = dif_align64(o + (size_t)h->nvars * sizeof(struct dif_varpos));
    /* DTrace's enabled probe ids, one per probe_clauses[] entry, and a counter per clause */
    L->epids = o;
    o = dif_align64(o + ((size_t)h->nprobe_clauses + h->nclauses) * 4);
    L->lean = o;                           /* a byte per probe: dif_lean.c's */
    o = dif_align64(o + h->nprobes);
    L->lean_ops = o;                       /* and an op per instruction */
    o = dif_align64(o + (size_t)h->ninsns * sizeof(struct dif_lean_op));
    L->cpus = o;
    o = dif_align64(o + (size_t)ncpus * sizeof(struct dif_cpu));
    L->globals = o;
    o = dif_align64(o + globals);
    /* dynamic variables: heads (a power of two, a quarter to a half of the chunks), then
     * chunks. dynvarsize counts what DTrace counts, a variable's key and value
     * (dtrace-utils: dynvarsize / (tuple + value) elements); each chunk's header and the
     * heads come on top, so a small dynvarsize holds as many variables as DTrace's does. */
    uint32_t dynsize = h->dynvarsize ? h->dynvarsize : DIF_DEF_DYNVARSIZE;
    L->dyn_chunk = dif_dyn_chunk_size(h, vars);
    L->dyn_nhash = L->dyn_nchunks = 0;
    if (L->dyn_chunk) {
        L->dyn_nchunks = dynsize / (L->dyn_chunk - DIF_DYN_HDR);
        uint32_t n = 1;
        while (n * 4 <= L->dyn_nchunks)
            n *= 2;
        L->dyn_nhash = L->dyn_nchunks ? n : 0;
    }
    L->dyn_hash = o;
    o = dif_align64(o + (size_t)L->dyn_nhash * 4);
    L->dyn = o;
    o = dif_align64(o + (size_t)L->dyn_nchunks * L->dyn_chunk);
    /* speculations: the verifier bounded nspec and nspec * specsize */
    L->nspec = h->nspec;
    L->specsize = h->nspec ? (h->specsize ? h->specsize : DIF_DEF_SPECSIZE) & ~7u : 0;
    L->specs = o;
    o = dif_align64(o + (size_t)L->nspec * sizeof(struct dif_spec));
    /* per CPU */
    L->bufsize = (h->bufsize ? h->bufsize : DIF_DEF_BUFSIZE) & ~7u;
    L->aggsize = (h->aggsize ? h->aggsize : DIF_DEF_AGGSIZE) & ~7u;
    size_t hash_bytes = dif_agg_cpu_size(L->aggsize, &L->agg_nhash);
    size_t c = 0;
    L->buf = c;
    c = dif_align64(c + L->bufsize);
    L->agg_hash = c;
    L->agg = dif_align64(c + hash_bytes);
    c = dif_align64(c + (L->aggsize > hash_bytes ? L->aggsize : hash_bytes + 8));
    L->scratch = c;
    c = dif_align64(c + (size_t)HVT_DIF_SCRATCH_STRS * dif_round8(h->strsize));
    L->locals = c;
    c = dif_align64(c + locals);
    L->local_gen = c;
    c = dif_align64(c + (size_t)nlocals * 4);
    L->specbufs = c;
    c = dif_align64(c + (size_t)L->nspec * sizeof(struct dif_specbuf));
    L->specdata = c;
    c = dif_align64(c + (size_t)L->nspec * L->specsize);
    L->cpu0 = o;
    L->cpu_stride = c;
    L->total = o + (size_t)ncpus * c;
}

/* DTrace numbers its enabled probes clause by clause (each clause's probes by ascending DTrace
 * id: BEGIN, END and ERROR, then the order of probes[]), from 1: epid = the clauses before's probes + the rank of this
 * probe among its clause's. probe_clauses[] is per probe, so count per clause first. The
 * verifier checked every entry < nclauses and every probe's range inside the array. */
static void dif_epids_init(struct dif_state *st, uint32_t *epids, uint32_t *next)
{
    const struct hvt_dif_hdr *h = st->hdr;
    memset(next, 0, (size_t)h->nclauses * 4);
    for (uint32_t i = 0; i < h->nprobe_clauses; i++)
        next[st->probe_clauses[i]]++;
    uint32_t base = 1;
    for (uint32_t c = 0; c < h->nclauses; c++) {
        uint32_t n = next[c];
        next[c] = base;
        base += n;
    }
    memset(epids, 0, (size_t)h->nprobe_clauses * 4);
    /* BEGIN, END and ERROR first: their DTrace ids (1, 2, 3) are below every other */
    const uint32_t special[3] = { h->begin_probe, h->end_probe, h->error_probe };
    for (int pass = 0; pass < 4; pass++)
        for (uint32_t p = 0; p < h->nprobes; p++) {
            uint32_t id = st->probes[p].id;
            bool is_special = id && (id == special[0] || id == special[1] || id == special[2]);
            if (pass < 3 ? !id || id != special[pass] : is_special)
                continue;
            for (uint32_t j = 0; j < st->probes[p].nclauses; j++) {
                uint64_t e = (uint64_t)st->probes[p].clauses + j;
                if (e < h->nprobe_clauses && !epids[e])
                    epids[e] = next[st->probe_clauses[e]]++;
            }
        }
    st->epids = epids;
}

static const struct hvt_dif_var *dif_vars_of(const struct hvt_dif_hdr *h)
{
    return (const void *)((const uint8_t *)h + h->off_vars);
}

size_t dif_state_size(const void *image, unsigned ncpus)
{
    struct dif_layout L;
    if (!image || !ncpus)
        return 0;
    dif_layout(image, dif_vars_of(image), ncpus, &L);
    return L.total;
}

int dif_state_init(struct dif_state **out, void *mem, size_t mem_len, const void *image,
                   unsigned ncpus, const struct dif_env *env)
{
    const struct hvt_dif_hdr *h = image;
    const uint8_t *img = image;
    uint8_t *m = mem;
    struct dif_layout L;
    if (!out || !mem || ((uintptr_t)mem & 7) || !image || !ncpus || ncpus > 0xffff || !env)
        return DIF_EINVAL;
    dif_layout(h, dif_vars_of(h), ncpus, &L);
    if (mem_len < L.total)
        return DIF_ENOMEM;
    struct dif_state *st = mem;
    memset(st, 0, sizeof(*st));
    st->hdr = h;
    st->clauses = (const void *)(img + h->off_clauses);
    st->insns = (const void *)(img + h->off_insns);
    st->consts = (const void *)(img + h->off_consts);
    st->vars = (const void *)(img + h->off_vars);
    st->aggs = (const void *)(img + h->off_aggs);
    st->probes = (const void *)(img + h->off_probes);
    st->probe_clauses = (const void *)(img + h->off_probe_clauses);
    st->strtab = (const char *)img + h->off_strtab;
    st->strsize = h->strsize;
    st->ncpus = ncpus;
    st->env = *env;
    st->varpos = (void *)(m + L.varpos);
    dif_epids_init(st, (void *)(m + L.epids), (uint32_t *)(void *)(m + L.epids) + h->nprobe_clauses);
    st->cpus = (void *)(m + L.cpus);
    st->globals = m + L.globals;
    st->nlocals = L.nlocals;
    st->dyn_hash = (void *)(m + L.dyn_hash);
    st->dyn_nhash = L.dyn_nhash;
    st->dyn = m + L.dyn;
    st->dyn_chunk = L.dyn_chunk;
    st->dyn_nchunks = L.dyn_nchunks;
    memset(st->dyn_hash, 0, (size_t)L.dyn_nhash * 4);
    st->specs = (void *)(m + L.specs);
    st->nspec = L.nspec;
    st->specsize = L.specsize;
    memset(st->specs, 0, (size_t)L.nspec * sizeof(struct dif_spec));
    /* globals start 0 / "" */
    memset(st->globals, 0, L.dyn_hash - L.globals);
    uint32_t goff = 0, loff = 0, lidx = 0;
    for (uint32_t i = 0; i < h->nvars; i++) {
        uint32_t size = (uint32_t)dif_var_bytes(&st->vars[i], h->strsize); /* the verifier bounds it */
        st->varpos[i].off = st->varpos[i].idx = 0;
        if (st->vars[i].kind == HVT_DIF_VK_GLOBAL) {
            st->varpos[i].off = goff;
            goff += size;
        } else if (st->vars[i].kind == HVT_DIF_VK_LOCAL) {
            st->varpos[i].off = loff;
            st->varpos[i].idx = lidx++;
            loff += size;
        }
    }
    for (unsigned cpu = 0; cpu < ncpus; cpu++) {
        struct dif_cpu *c = &st->cpus[cpu];
        uint8_t *base = m + L.cpu0 + (size_t)cpu * L.cpu_stride;
        memset(c, 0, sizeof(*c));
        c->buf = base + L.buf;
        c->buf_size = L.bufsize;
        c->agg_hash = (void *)(base + L.agg_hash);
        c->agg_nhash = L.agg_nhash;
        c->agg = base + L.agg;
        c->agg_size = (uint32_t)(L.scratch - L.agg);
        memset(c->agg_hash, 0, (size_t)L.agg_nhash * 4);
        c->scratch = (char *)(base + L.scratch);
        c->locals = base + L.locals;
        c->local_gen = (void *)(base + L.local_gen);
        memset(c->local_gen, 0, (size_t)L.nlocals * 4);
        c->spec = (void *)(base + L.specbufs);
        for (uint32_t i = 0; i < L.nspec; i++)
            c->spec[i] = (struct dif_specbuf){ .buf = base + L.specdata + (size_t)i * L.specsize };
    }
    dif_lean_classify(st, m + L.lean, (void *)(m + L.lean_ops));
    *out = st;
    return DIF_OK;
}

const struct hvt_dif_probe *dif_probe_lookup(const struct hvt_dif_probe *p, uint32_t n,
                                             uint32_t id)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (p[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && p[lo].id == id ? &p[lo] : NULL;
}

const struct hvt_dif_probe *dif_probe_find(const void *image, uint32_t id)
{
    const struct hvt_dif_hdr *h = image;
    if (!image)
        return NULL;
    return dif_probe_lookup((const void *)((const uint8_t *)image + h->off_probes),
                             h->nprobes, id);
}

/* A counter record at o (40 bytes) */
static void dif_put_count(uint8_t *o, unsigned cpu, uint16_t type, uint64_t n)
{
    struct hvt_drec r;
    memset(&r, 0, sizeof(r));
    r.len = sizeof(r);
    r.type = type;
    r.cpu = (uint16_t)cpu;
    r.arg = n;
    memcpy(o, &r, sizeof(r));
}

long dif_drain(struct dif_state *st, unsigned cpu, void *out, size_t len)
{
    if (!st || cpu >= st->ncpus || (!out && len))
        return DIF_EINVAL;
    struct dif_cpu *c = &st->cpus[cpu];
    uint8_t *o = out;
    size_t w = 0;
    const size_t rs = sizeof(struct hvt_drec);
    dif_lock(&c->buf_lock);
    dif_spec_clean_cpu(st, cpu);             /* this CPU's part of commits made meanwhile */
    /* the losses first, so they are reported even when the data does not all fit */
    if (c->drops && w + rs <= len) {
        dif_put_count(o + w, cpu, HVT_DREC_DROPS, c->drops);
        c->drops = 0;
        w += rs;
    }
    if (__atomic_load_n(&st->dyndrops, __ATOMIC_RELAXED) && w + rs <= len) {
        uint64_t n = __atomic_exchange_n(&st->dyndrops, 0, __ATOMIC_RELAXED);
        if (n) {
            dif_put_count(o + w, cpu, HVT_DREC_DYNDROPS, n);
            w += rs;
        }
    }
    if (__atomic_load_n(&c->aggdrops, __ATOMIC_RELAXED) && w + rs <= len) {
        dif_put_count(o + w, cpu, HVT_DREC_AGGDROPS,
                      __atomic_exchange_n(&c->aggdrops, 0, __ATOMIC_RELAXED));
        w += rs;
    }
    if (c->specdrops && w + rs <= len) {
        dif_put_count(o + w, cpu, HVT_DREC_SPECDROPS, c->specdrops);
        c->specdrops = 0;
        w += rs;
    }
    static const uint16_t spec_type[2] = { HVT_DREC_SPECBUSY, HVT_DREC_SPECUNAVAIL };
    uint64_t *spec_count[2] = { &st->specbusy, &st->specunavail };
    for (unsigned i = 0; i < 2; i++) {
        if (!__atomic_load_n(spec_count[i], __ATOMIC_RELAXED) || w + rs > len)
            continue;
        uint64_t n = __atomic_exchange_n(spec_count[i], 0, __ATOMIC_RELAXED);
        if (n) {
            dif_put_count(o + w, cpu, spec_type[i], n);
            w += rs;
        }
    }
    while (c->buf_head < c->buf_tail) {
        uint32_t rlen = ((const struct hvt_drec *)(c->buf + c->buf_head))->len;
        if (rlen < rs || rlen > c->buf_tail - c->buf_head || (rlen & 7)) {
            c->buf_head = c->buf_tail;          /* cannot happen: our own records */
            break;
        }
        if (w + rlen > len)
            break;
        memcpy(o + w, c->buf + c->buf_head, rlen);
        w += rlen;
        c->buf_head += rlen;
    }
    /* what is left moves to the front: the buffer is linear, appended at the tail */
    if (c->buf_head && c->buf_head < c->buf_tail)
        memmove(c->buf, c->buf + c->buf_head, c->buf_tail - c->buf_head);
    c->buf_tail -= c->buf_head;
    c->buf_head = 0;
    c->notified = 0;
    dif_unlock(&c->buf_lock);
    return (long)w;
}

bool dif_exiting(const struct dif_state *st, int64_t *status)
{
    if (!__atomic_load_n(&st->exited, __ATOMIC_ACQUIRE))
        return false;
    if (status)
        *status = st->exit_status;
    return true;
}
