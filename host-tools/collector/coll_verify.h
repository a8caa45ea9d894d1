/*
 * coll_verify.h - offline check of a collector trace directory (hvtrace-collector --verify DIR):
 * re-parses every chunk with the same strict parser, checks offsets/seqs are continuous across
 * chunks (or counts the gaps), that console.log equals the CONSOLE payloads in order, and that
 * the totals agree with state.bin. Used by the tests; handy after a crash.
 */
#ifndef HVT_COLL_VERIFY_H
#define HVT_COLL_VERIFY_H
/* Prints one "verify: ..." line; returns 0 when consistent. */
int coll_verify_dir(const char *dir);
#endif
