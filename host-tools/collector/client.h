/* client: hvt's side of the running hvtrace-collector's command socket (coll_sock.h), for the
 * commands that drive the hypervisor through it (hvt trace, hvt -n, D programs).
 * Contract: hvt_coll_ask() sends one request line (to socket SOCK, or DIR/control.sock) and
 * puts the answer without its "end" line in out: 0 ok, 1 refused, -1 no collector or no
 * answer (why in out). The answer's values are read with hvt_coll_val/uval. */
#ifndef HVT_COLL_CLIENT_H
#define HVT_COLL_CLIENT_H
#include <stddef.h>
#include <stdint.h>
int hvt_coll_ask(const char *dir, const char *sock, const char *line, char *out, size_t cap);
/* The value of "key=" at a line start of an answer (NULL if absent), and as a number (0). */
const char *hvt_coll_val(const char *ans, const char *key, char *buf, size_t n);
uint64_t hvt_coll_uval(const char *ans, const char *key);
#endif
