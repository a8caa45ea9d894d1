addr:vfs_read+5 0
addr:vfs_read+5 2
addr:vfs_read+5 1
addr:vfs_read+5 3

