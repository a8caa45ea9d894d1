/*
 * hv_image.c - the hypervisor image: which layers it holds and the order they start in. The
 * one file that names every layer; each layer names only the API of the layers below it.
 *
 *     vmm/      mechanism: VMX, exits, EPT, guest memory         vmm_init()
 *     net/      transport: the dedicated NIC and its stream       net_layer_init()   (optional)
 *     trace/    policy: single-stepping, records, triggers        trace_layer_init()
 *
 * The transport starts before the policy so the policy can be handed the transport's table
 * (hv_transport.h); its shutdown notifiers then run after the policy's (hv_exit.h), so the
 * policy's last records still go out. Built with HV_IMAGE_BARE, the image holds vmm/ alone
 * (make hv-bare): the guest runs under the bare mechanism, which a test boots to init.
 * HV_IMAGE_NO_NET leaves the transport out (HVT_NET=0). HV_IMAGE_NETTEST (make hv-nettest)
 * holds vmm/'s services and the transport, no VMX and no policy: init runs the transport's
 * selftest load by itself and then returns an error, so the loader never virtualizes a CPU -
 * the NIC drivers, lwIP and the stream core run on a machine without VT-x (QEMU TCG).
 */
#include "hv_layer.h"
#include "hv_api.h"
#include "hv_transport.h"
#ifdef HV_IMAGE_NETTEST
#include "net.h"
#elif !defined(HV_IMAGE_BARE)
#include "trace.h"
#ifndef HV_IMAGE_NO_NET
#include "net.h"
#endif
#endif

int hv_entry_init(struct hvt_boot_info *bi);
int hv_entry_cpu(struct hvt_boot_info *bi, struct hvt_cpu_launch *l);

#ifdef HV_IMAGE_NETTEST
/* Bounds the whole standalone run (TSC ticks: ~100 s at 3 GHz) */
#define HV_NETTEST_MAX_TSC 300000000000ull
/* What init returns after the test: no CPU may be virtualized by this image. */
#define HV_NETTEST_PASSED 100
#define HV_NETTEST_FAILED 101

int hv_entry_init(struct hvt_boot_info *bi)
{
    int rc = vmm_init_services(bi);
    if (rc)
        return rc;
    hv_log("hvtrace: nettest image: vmm/ services and net/ only, no VMX\n");
    rc = net_layer_selftest(bi, HV_NETTEST_MAX_TSC);
    vmm_services_end();
    return rc == 0 ? HV_NETTEST_PASSED : HV_NETTEST_FAILED;
}
#else
int hv_entry_init(struct hvt_boot_info *bi)
{
    int rc = vmm_init(bi);
    if (rc)
        return rc;
#ifndef HV_IMAGE_BARE
    static struct hv_transport transport;      /* all NULL: no stream */
#ifndef HV_IMAGE_NO_NET
    if (net_layer_init(bi, &transport)) {
        hv_log("hvtrace: dedicated NIC not attached: running without a stream\n");
        transport = (struct hv_transport){ 0 };
    }
#endif
    rc = trace_layer_init(bi, &transport);
    if (rc)
        return rc;
#else
    hv_log("hvtrace: bare image: vmm/ only, no transport, no policy\n");
#endif
    vmm_init_done();
    return 0;
}
#endif

int hv_entry_cpu(struct hvt_boot_info *bi, struct hvt_cpu_launch *l)
{
    return vmm_start_cpu(bi, l);
}
