CPU     ID                    FUNCTION:NAME
  0      2                             :END alpha:
              vmlinux`vfs_read+0x1a
              vmlinux`ksys_read+0x6b
|1
alpha:
              vmlinux`ksys_read+0x6b
              vmlinux`__x64_sys_read+0x19
|1
beta:
              vmlinux`vfs_read+0x1a
              vmlinux`ksys_read+0x6b
|1
beta:
              vmlinux`ksys_read+0x6b
              vmlinux`__x64_sys_read+0x19
|1
gamma:
              vmlinux`vfs_read+0x1a
              vmlinux`ksys_read+0x6b
|1
gamma:
              vmlinux`ksys_read+0x6b
              vmlinux`__x64_sys_read+0x19
|1



              vmlinux`vfs_read+0x1a
              vmlinux`ksys_read+0x6b
              vmlinux`__x64_sys_read+0x19
              vmlinux`do_syscall_64+0x3b
                3

              vmlinux`ksys_read+0x6b
              vmlinux`__x64_sys_read+0x19
              vmlinux`do_syscall_64+0x3b
                3

              0x400000
              0x401100
                0

              0x400001
              0x401200
                1

              0x400002
              0x401300
                2

              0x400003
              0x401400
                3

              0x400004
              0x401100
                4

              0x400005
              0x401200
                5
