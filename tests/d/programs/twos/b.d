#!/usr/sbin/dtrace -s
END { printf("b end\n"); }
