/*
 * coll_verify.h - offline check of a collector trace directory (hvtrace-collector --verify DIR):
 * re-parses every chunk with the same strict parser, checks offsets/seqs are continuous across
 * chunks (or counts the gaps), that console.log equals the CONSOLE payloads in order, that
 * the totals agree with state.bin, and that trace.hvt is exactly what the messages make
 * (rebuilt with coll_trace into trace.hvt.verify, compared, removed). Used by the tests; handy
 * after a crash. hvtrace-collector --rebuild-trace DIR writes trace.hvt afresh from the
 * messages (a directory whose trace.hvt was lost or damaged).
 */
#ifndef HVT_COLL_VERIFY_H
#define HVT_COLL_VERIFY_H
/* Prints one "verify: ..." line; returns 0 when consistent. */
int coll_verify_dir(const char *dir);
int coll_rebuild_trace(const char *dir);
#endif
