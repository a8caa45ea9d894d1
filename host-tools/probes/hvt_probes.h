/* hvt_probes: the probe side of the hvt CLI (hvt -l, hvt -n): see hvt_probes.c. */
#ifndef HVT_PROBES_H
#define HVT_PROBES_H
/* argv holds the arguments after "hvt"; returns the exit status (0, 1 bad input, 2 usage). */
int hvt_probes_main(int argc, char **argv);
#endif
