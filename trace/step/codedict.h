/*
 * codedict.h - the code-bytes dictionary: each distinct (address, instruction bytes) gets a
 * dense id once; its bytes travel once, in a CODE batch (include/hvt_trace_format.h).
 * Contract: codedict_id() is safe from any CPU; it returns the id, adding the entry (and
 * queueing it for the next CODE batch) when new. codedict_flush() sends the queued entries;
 * callers flush before sending any RECORDS chunk, so ids are defined before first use.
 * When the table fills up it forgets everything (ids stay valid: they are never reused).
 * codedict_forget() does the same on demand: after CODE batches were lost (a failed link),
 * every code gets a new id, sent again, so a later trace window decodes (callers also drop
 * their own caches of ids: step.c's decoded cache starts afresh with each window).
 */
#ifndef HVT_CODEDICT_H
#define HVT_CODEDICT_H
#include <stdint.h>
#include <stdbool.h>

int      codedict_init(void);
uint32_t codedict_id(uint64_t rip, const uint8_t *bytes, unsigned len);
void     codedict_flush(void);
void     codedict_forget(void);

#endif
