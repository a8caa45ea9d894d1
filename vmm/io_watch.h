/*
 * io_watch.h - which port accesses vmm/ performs at once, ahead of the full exit dispatch.
 *
 * vmm/ intercepts two ports only to see one value written to them: a reset request (0xCF9
 * with bit 2, the keyboard controller's 0x64 with 0xFE; vmx_exit.c ends the trace first). The
 * I/O bitmap cannot say which value, and not even which access width: every 32-bit access to
 * 0xCF8 (PCI configuration mechanism #1's CONFIG_ADDRESS, which a dword access at 0xCF8 always
 * is: PCI Local Bus Specification 3.0, 3.2.2.3.2) covers 0xCF9 and exits too, a Linux boot's
 * PCI scan makes tens of thousands of them, and the guest polls 0x64's status. Those accesses
 * cannot be a reset: vmm/ performs them and resumes the guest, without the full dispatch (no
 * observers, no handler lookup) - while no policy steps this CPU or times its exits (then the
 * full dispatch takes them, as every other exit), no module asked for the port, and nothing
 * else waits for the full dispatch on this CPU (an NMI or #MC to deliver, EPT or control
 * edits to take up).
 *
 * Contract: io_watch_fast(port, size, in, string, module) is pure (host-tested): may this
 * access, as the exit qualification describes it, be done at once? module: a module
 * registered a handler for the port.
 */
#ifndef HVT_IO_WATCH_H
#define HVT_IO_WATCH_H
#include <stdbool.h>
#include <stdint.h>

#define IO_WATCH_PCI_ADDR  0xcf8u       /* CONFIG_ADDRESS (a dword at 0xCF8) */
#define IO_WATCH_KBC_CMD   0x64u        /* keyboard controller: command (OUT), status (IN) */

static inline bool io_watch_fast(uint16_t port, unsigned size, bool in, bool string, bool module)
{
    if (string || module)
        return false;
    if (port == IO_WATCH_PCI_ADDR && size == 4)
        return true;                    /* CONFIG_ADDRESS, read or written: never 0xCF9 */
    return port == IO_WATCH_KBC_CMD && size == 1 && in;   /* the status: never a command */
}

#endif
