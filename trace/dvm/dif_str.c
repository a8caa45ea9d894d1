/*
 * dif_str.c - string values of the interpreter (dif.h). A register holding a string holds a
 * handle: DIF_H_TAG | kind | index, kind DIF_H_SCRATCH (one of this CPU's scratch buffers,
 * whose length is kept beside it), DIF_H_STRTAB (an offset in the image's strtab) or DIF_H_EXEC
 * (the firing's execname, which lives as long as the firing: no copy). Every
 * use checks the register's run-time type, the tag, the kind and the index, and reads at most
 * strsize-1 bytes, so a bad handle is a BADSTR fault, never a wild read. A scratch buffer is
 * free when no register holds it: strings are copied into variables, tuples and records, so
 * registers are the only references.
 */
#include "dif_impl.h"

static uint32_t dif_strnlen(const char *s, uint32_t max)
{
    uint32_t n = 0;
    while (n < max && s[n])
        n++;
    return n;
}

/* Every use of a string pays its length from the firing's budget: the op that follows
 * (copy, compare, join, record, key) is that long. */
bool dif_str_get(struct dif_run *r, unsigned reg, const char **p, uint32_t *len)
{
    const struct dif_state *st = r->st;
    reg &= HVT_DIF_NREGS - 1;
    uint64_t h = r->reg[reg], idx = h & DIF_H_IDXMASK;
    if (r->rt[reg] != DIF_RT_STR || (h & DIF_H_TAGMASK) != DIF_H_TAG ||
        (h & ~(DIF_H_TAGMASK | DIF_H_KINDMASK | DIF_H_IDXMASK)))
        return dif_fault(r, HVT_DIF_F_BADSTR, h);
    if ((h & DIF_H_KINDMASK) == DIF_H_SCRATCH && idx < HVT_DIF_SCRATCH_STRS &&
        r->c->scratch_len[idx] < st->strsize) {
        *p = r->c->scratch + idx * dif_slot_stride(st);
        *len = r->c->scratch_len[idx];
        if (!dif_charge(r, *len))
            return false;
        return true;
    }
    if ((h & DIF_H_KINDMASK) == DIF_H_EXEC && !idx) {
        const char *e = r->f ? r->f->execname : NULL;
        size_t max = e ? r->f->execname_max : 0;
        *p = e ? e : "";
        *len = dif_strnlen_fast(*p, max < st->strsize - 1 ? (uint32_t)max : st->strsize - 1);
        if (!dif_charge(r, *len))
            return false;
        return true;
    }
    if ((h & DIF_H_KINDMASK) == DIF_H_STRTAB && idx < st->hdr->strtab_len) {
        uint32_t room = st->hdr->strtab_len - (uint32_t)idx;
        *p = st->strtab + idx;
        *len = dif_strnlen(*p, room < st->strsize - 1 ? room : st->strsize - 1);
        if (!dif_charge(r, *len))
            return false;
        return true;
    }
    return dif_fault(r, HVT_DIF_F_BADSTR, h);
}

char *dif_scratch_alloc(struct dif_run *r, unsigned *slot)
{
    /* A slot not handed out yet in this clause is free: only registers hold scratch handles,
     * and every register starts the clause empty. Only when all were given out, look which
     * ones registers still hold. */
    uint32_t fresh = ~r->given & ((1u << HVT_DIF_SCRATCH_STRS) - 1);
    if (fresh) {
        *slot = (unsigned)__builtin_ctz(fresh);
        r->given |= 1u << *slot;
        return r->c->scratch + *slot * dif_slot_stride(r->st);
    }
    unsigned used = 0;
    for (unsigned i = 0; i < HVT_DIF_NREGS; i++) {
        uint64_t h = r->reg[i];
        if (r->rt[i] == DIF_RT_STR && (h & (DIF_H_TAGMASK | DIF_H_KINDMASK)) ==
            (DIF_H_TAG | DIF_H_SCRATCH) && (h & DIF_H_IDXMASK) < HVT_DIF_SCRATCH_STRS)
            used |= 1u << (h & DIF_H_IDXMASK);
    }
    for (unsigned s = 0; s < HVT_DIF_SCRATCH_STRS; s++) {
        if (!(used & (1u << s))) {
            *slot = s;
            return r->c->scratch + s * dif_slot_stride(r->st);
        }
    }
    dif_fault(r, HVT_DIF_F_NOSCRATCH, 0);
    return NULL;
}

void dif_str_set(struct dif_run *r, unsigned rd, unsigned slot, uint32_t len)
{
    rd &= HVT_DIF_NREGS - 1;
    r->c->scratch[slot * dif_slot_stride(r->st) + len] = 0;
    r->c->scratch_len[slot] = (uint16_t)len;
    r->reg[rd] = DIF_H_TAG | DIF_H_SCRATCH | slot;
    r->rt[rd] = DIF_RT_STR;
}

void dif_str_set_strtab(struct dif_run *r, unsigned rd, uint32_t off)
{
    rd &= HVT_DIF_NREGS - 1;
    r->reg[rd] = DIF_H_TAG | DIF_H_STRTAB | off;
    r->rt[rd] = DIF_RT_STR;
}

/* copyinstr/stringof: page by page, so nothing past the NUL is touched; a page that is not
 * mapped before the NUL (or strsize-1 bytes) faults at its first byte. */
bool dif_str_guest(struct dif_run *r, unsigned rd, uint64_t va, int user)
{
    unsigned slot;
    char *d = dif_scratch_alloc(r, &slot);
    uint32_t max = r->st->strsize - 1, n = 0;
    if (!d)
        return false;
    while (n < max) {
        uint64_t a = va + n;
        size_t chunk = 4096 - (a & 4095), got = 0;
        if (chunk > max - n)
            chunk = max - n;
        if (r->st->env.read)
            got = r->st->env.read(r->f->ctx, a, d + n, chunk, user);
        if (got > chunk)
            got = chunk;
        if (!dif_charge(r, chunk))
            return false;
        for (uint32_t i = n; i < n + got; i++) {
            if (!d[i]) {
                dif_str_set(r, rd, slot, i);
                return true;
            }
        }
        n += (uint32_t)got;
        if (got < chunk)
            return dif_fault(r, HVT_DIF_F_BADADDR, va + n);
    }
    dif_str_set(r, rd, slot, n);
    return true;
}

/* A process's argument list as ps shows it (psinfo_t's pr_psargs): the strings the kernel
 * laid out between mm->arg_start and arg_end, their NULs made spaces (the last one ends the
 * string). A range longer than a string value is cut, as pr_psargs is. */
bool dif_str_guest_range(struct dif_run *r, unsigned rd, uint64_t va, uint64_t end, int user)
{
    unsigned slot;
    char *d = dif_scratch_alloc(r, &slot);
    uint32_t max = r->st->strsize - 1, n = 0;
    if (!d)
        return false;
    uint64_t want = end > va ? end - va : 0;
    if (want > max)
        want = max;
    while (n < want) {
        uint64_t a = va + n;
        size_t chunk = 4096 - (a & 4095), got = 0;
        if (chunk > want - n)
            chunk = (size_t)(want - n);
        if (r->st->env.read)
            got = r->st->env.read(r->f->ctx, a, d + n, chunk, user);
        if (got > chunk)
            got = chunk;
        if (!dif_charge(r, chunk))
            return false;
        n += (uint32_t)got;
        if (got < chunk)
            return dif_fault(r, HVT_DIF_F_BADADDR, va + n);
    }
    while (n > 0 && !d[n - 1])
        n--;
    for (uint32_t i = 0; i < n; i++)
        if (!d[i])
            d[i] = ' ';
    dif_str_set(r, rd, slot, n);
    return true;
}

/* execname: no copy; dif_str_get reads the firing's buffer (stable for the firing). */
void dif_str_set_exec(struct dif_run *r, unsigned rd)
{
    rd &= HVT_DIF_NREGS - 1;
    r->reg[rd] = DIF_H_TAG | DIF_H_EXEC;
    r->rt[rd] = DIF_RT_STR;
}

bool dif_str_join(struct dif_run *r, unsigned rd, unsigned ra, unsigned rb)
{
    const char *a, *b;
    uint32_t la, lb, max = r->st->strsize - 1;
    unsigned slot;
    char *d;
    if (!dif_str_get(r, ra, &a, &la) || !dif_str_get(r, rb, &b, &lb) ||
        !(d = dif_scratch_alloc(r, &slot)))
        return false;
    if (lb > max - la)
        lb = max - la;               /* truncated at strsize-1, as DTrace's strjoin */
    memcpy(d, a, la);
    memcpy(d + la, b, lb);
    dif_str_set(r, rd, slot, la + lb);
    return true;
}

/* DTrace's basename: the last component without trailing slashes; "" gives ".", a string of
 * slashes "/". */
bool dif_str_basename(struct dif_run *r, unsigned rd, unsigned ra)
{
    const char *s;
    uint32_t len;
    unsigned slot;
    char *d;
    if (!dif_str_get(r, ra, &s, &len) || !(d = dif_scratch_alloc(r, &slot)))
        return false;
    if (len == 0) {
        s = ".";
        len = 1;
    }
    int i, lastbase = -1, firstbase = -1;
    for (i = (int)len - 1; i >= 0 && s[i] == '/'; i--)
        ;
    if (i >= 0)
        lastbase = i;
    for (; i >= 0 && s[i] != '/'; i--)
        ;
    if (i >= 0)
        firstbase = i + 1;
    if (lastbase == -1)
        firstbase = lastbase = 0;    /* only slashes: "/" */
    if (firstbase == -1)
        firstbase = 0;               /* no slash: the whole string */
    uint32_t n = (uint32_t)(lastbase - firstbase + 1);
    memcpy(d, s + firstbase, n);     /* n <= len <= strsize-1 */
    dif_str_set(r, rd, slot, n);
    return true;
}

bool dif_str_cmp(struct dif_run *r, unsigned rd, unsigned ra, unsigned rb)
{
    const char *a, *b;
    uint32_t la, lb;
    if (!dif_str_get(r, ra, &a, &la) || !dif_str_get(r, rb, &b, &lb))
        return false;
    int64_t v = la < lb ? -1 : la > lb ? 1 : 0;
    uint32_t n = la < lb ? la : lb;
    for (uint32_t i = 0; i < n; i++) {
        if (a[i] != b[i]) {
            v = (uint8_t)a[i] < (uint8_t)b[i] ? -1 : 1;
            break;
        }
    }
    rd &= HVT_DIF_NREGS - 1;
    r->reg[rd] = (uint64_t)v;
    r->rt[rd] = DIF_RT_INT;
    return true;
}
