/* fires: 4  args: -q ${AT} */
addr:kernel:vfs_read+5:, addr:kernel:$1: { printf("%s:%s %d\n", probeprov, probefunc, arg0); }
