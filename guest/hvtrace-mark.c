/* hvtrace-mark - start or stop hvtrace's tracer from inside the guest.
 * usage: hvtrace-mark start|stop      (exit 2 when hvtrace is not present: no VMCALL issued) */
#include <stdio.h>
#include <string.h>
#include "hvt_guest.h"

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "start") && strcmp(argv[1], "stop"))) {
        fprintf(stderr, "usage: hvtrace-mark start|stop\n");
        return 1;
    }
    if (!hvt_present()) {
        fprintf(stderr, "hvtrace-mark: hvtrace not detected (CPUID): nothing done\n");
        return 2;
    }
    int64_t r = hvt_mark(!strcmp(argv[1], "start"));
    if (r) {
        fprintf(stderr, "hvtrace-mark: hypercall failed: %lld\n", (long long)r);
        return 1;
    }
    return 0;
}
