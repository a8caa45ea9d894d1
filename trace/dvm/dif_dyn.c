/*
 * dif_dyn.c - dynamic variables (dif.h): thread-locals keyed by (tid, variable) and
 * associative array elements keyed by (variable, tuple bytes) in one hash space shared by
 * every CPU, under st->var_lock. The space is cut into chunks of one size, the largest entry
 * the program's variables can make (so any freed chunk serves any variable: no variable can
 * starve another by fragmentation); free chunks are a list, never-used ones a bump index.
 */
#include "dif_impl.h"

uint32_t dif_dyn_chunk_size(const struct hvt_dif_hdr *h, const struct hvt_dif_var *vars)
{
    uint32_t best = 0, str_key = dif_round8(2 + h->strsize - 1);
    for (uint32_t i = 0; i < h->nvars; i++) {
        const struct hvt_dif_var *v = &vars[i];
        uint32_t key = 0;
        if (v->kind == HVT_DIF_VK_THREAD) {
            key = 8;
        } else if (v->kind == HVT_DIF_VK_ASSOC) {
            for (unsigned k = 0; k < v->nkeys && k < HVT_DIF_TUPLE_MAX; k++)
                key += v->key_types[k] == HVT_DIF_T_STR ? str_key : 8;
            if (key > HVT_DIF_KEY_MAX)
                key = HVT_DIF_KEY_MAX;   /* a longer tuple faults before it gets here */
        } else {
            continue;
        }
        uint32_t val = v->type == HVT_DIF_T_STR ? dif_round8(h->strsize) : 8;
        if (DIF_DYN_HDR + key + val > best)
            best = DIF_DYN_HDR + key + val;
    }
    return best;
}

static struct dif_dyn_ent *dif_dyn_at(struct dif_state *st, uint32_t idx1)
{
    return (struct dif_dyn_ent *)(st->dyn + (size_t)(idx1 - 1) * st->dyn_chunk);
}

/* The link that points at the matching entry (its chain's head or a predecessor's next), or
 * NULL. Chains only ever hold chunks this file linked, so indices are in range. */
static uint32_t *dif_dyn_find(struct dif_state *st, uint32_t h, uint8_t kind, uint16_t var,
                              const uint64_t *key, uint32_t key_len)
{
    uint32_t *link = &st->dyn_hash[h & (st->dyn_nhash - 1)];
    while (*link) {
        struct dif_dyn_ent *e = dif_dyn_at(st, *link);
        if (e->hash == h && e->var == var && e->kind == kind && e->key_len == key_len &&
            dif_key_eq(e + 1, key, key_len))
            return link;
        link = &e->next;
    }
    return NULL;
}

uint32_t dif_dyn_load(struct dif_state *st, uint8_t kind, uint16_t var, const uint64_t *key,
                      uint32_t key_len, void *val, uint32_t max)
{
    if (!st->dyn_nhash)
        return 0;
    uint32_t h = dif_key_hash(st, ((uint64_t)kind << 16) | var, key, key_len), n = 0;
    dif_lock(&st->var_lock);
    uint32_t *link = dif_dyn_find(st, h, kind, var, key, key_len);
    if (link) {
        struct dif_dyn_ent *e = dif_dyn_at(st, *link);
        n = e->val_len < max ? e->val_len : max;
        memcpy(val, (uint8_t *)(e + 1) + key_len, n);
    }
    dif_unlock(&st->var_lock);
    return n;
}

bool dif_dyn_store(struct dif_state *st, uint8_t kind, uint16_t var, const uint64_t *key,
                   uint32_t key_len, const void *val, uint32_t len)
{
    if (!st->dyn_nhash || DIF_DYN_HDR + key_len + len > st->dyn_chunk)
        return len == 0;             /* nothing can be stored: a delete finds nothing */
    uint32_t h = dif_key_hash(st, ((uint64_t)kind << 16) | var, key, key_len);
    bool ok = true;
    dif_lock(&st->var_lock);
    uint32_t *link = dif_dyn_find(st, h, kind, var, key, key_len);
    if (link && !len) {
        /* delete: unlink, onto the free list */
        uint32_t idx = *link;
        struct dif_dyn_ent *e = dif_dyn_at(st, idx);
        *link = e->next;
        e->next = st->dyn_free;
        st->dyn_free = idx;
    } else if (link) {
        struct dif_dyn_ent *e = dif_dyn_at(st, *link);
        e->val_len = (uint16_t)len;
        memcpy((uint8_t *)(e + 1) + key_len, val, len);
    } else if (len) {
        uint32_t idx = st->dyn_free;
        if (idx)
            st->dyn_free = dif_dyn_at(st, idx)->next;
        else if (st->dyn_next < st->dyn_nchunks)
            idx = ++st->dyn_next;
        if (idx) {
            struct dif_dyn_ent *e = dif_dyn_at(st, idx);
            uint32_t *head = &st->dyn_hash[h & (st->dyn_nhash - 1)];
            e->hash = h;
            e->var = var;
            e->kind = kind;
            e->pad = 0;
            e->key_len = (uint16_t)key_len;
            e->val_len = (uint16_t)len;
            memcpy(e + 1, key, key_len);
            memcpy((uint8_t *)(e + 1) + key_len, val, len);
            e->next = *head;
            *head = idx;
        } else {
            ok = false;
        }
    }
    dif_unlock(&st->var_lock);
    return ok;
}
