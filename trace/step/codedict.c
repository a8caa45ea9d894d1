/* codedict.c - code dictionary: open-addressing hash of (rip, bytes) -> id.
 * Lookups are lock-free; inserts and the reset of a full table take the lock. A reset races
 * with lock-free readers on other CPUs (a reader could match an entry being zeroed and return
 * a torn id: seen as a corrupt chunk in a 7.6 M-instruction trace), so readers check a
 * sequence count around their read (odd while a reset runs) and retry under the lock. */
#include "codedict.h"
#include "trace.h"
#include "hv_api.h"
#include "hvt_trace_format.h"

#define DICT_SLOTS   262144u           /* power of two; 8 MiB: ~196 k entries before a reset */
#define DICT_MAX     (DICT_SLOTS / 4 * 3)
#define DICT_PROBES  16
#define BATCH_BYTES  (64u * 1024)

struct entry { uint64_t rip; uint32_t id; uint8_t len, used; uint8_t bytes[HVT_CODE_MAX + 1]; };

static struct entry *table;
static uint32_t used, next_id;
static volatile uint32_t reset_seq;        /* odd while the table is being reset */
static struct spinlock lock;
static uint8_t *batch;
static uint32_t batch_len, batch_entries, batch_first;

int codedict_init(void)
{
    table = hv_alloc_pages(HV_PAGES(DICT_SLOTS * sizeof(struct entry)));
    batch = hv_alloc_pages(HV_PAGES(BATCH_BYTES));
    return table && batch ? 0 : -1;
}

static uint32_t hash(uint64_t rip)
{
    rip ^= rip >> 29;
    rip *= 0xbf58476d1ce4e5b9ull;
    return (uint32_t)(rip >> 32) & (DICT_SLOTS - 1);
}

static void flush_locked(void)
{
    if (!batch_entries)
        return;
    struct trace_chunk_info ci = { .cpu = 0, .kind = TRACE_CHUNK_CODE, .nrecords = batch_entries,
                                   .first_code_id = batch_first };
    trace_sink_chunk(&ci, batch, batch_len);
    batch_len = batch_entries = 0;
}

/* Forget every entry (readers retry: see the top). Ids are never reused. */
static void forget_locked(void)
{
    __atomic_store_n(&reset_seq, reset_seq + 1, __ATOMIC_RELEASE);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    memset(table, 0, DICT_SLOTS * sizeof(struct entry));
    __atomic_store_n(&reset_seq, reset_seq + 1, __ATOMIC_RELEASE);
    used = 0;
}

void codedict_forget(void)
{
    spin_lock(&lock);
    forget_locked();
    spin_unlock(&lock);
}

void codedict_flush(void)
{
    spin_lock(&lock);
    flush_locked();
    spin_unlock(&lock);
}

uint32_t codedict_id(uint64_t rip, const uint8_t *bytes, unsigned len)
{
    uint32_t h = hash(rip);
    /* Lock-free lookup of a published entry; entries are only written under the lock and
     * 'used' is set last. The sequence count catches a reset running meanwhile. */
    uint32_t seq = __atomic_load_n(&reset_seq, __ATOMIC_ACQUIRE);
    if (!(seq & 1))
        for (unsigned i = 0; i < DICT_PROBES; i++) {
            struct entry *e = &table[(h + i) & (DICT_SLOTS - 1)];
            if (!__atomic_load_n(&e->used, __ATOMIC_ACQUIRE))
                break;
            if (e->rip == rip && e->len == len && !memcmp(e->bytes, bytes, len)) {
                uint32_t id = e->id;
                __atomic_thread_fence(__ATOMIC_ACQUIRE);
                if (__atomic_load_n(&reset_seq, __ATOMIC_RELAXED) == seq)
                    return id;
                break;                          /* a reset ran: ask again under the lock */
            }
        }
    spin_lock(&lock);
    if (used >= DICT_MAX)
        forget_locked();
    struct entry *slot = 0;
    for (unsigned i = 0; i < DICT_PROBES; i++) {
        struct entry *e = &table[(h + i) & (DICT_SLOTS - 1)];
        if (!e->used) { slot = e; break; }
        if (e->rip == rip && e->len == len && !memcmp(e->bytes, bytes, len)) {
            spin_unlock(&lock);
            return e->id;
        }
    }
    uint32_t id = next_id++;
    if (slot) {
        slot->rip = rip;
        slot->id = id;
        slot->len = (uint8_t)len;
        memcpy(slot->bytes, bytes, len);
        __atomic_store_n(&slot->used, 1, __ATOMIC_RELEASE);
        used++;
    }
    if (batch_len + 1 + len > BATCH_BYTES)
        flush_locked();
    if (!batch_entries)
        batch_first = id;
    batch[batch_len++] = (uint8_t)len;
    memcpy(batch + batch_len, bytes, len);
    batch_len += len;
    batch_entries++;
    spin_unlock(&lock);
    return id;
}
