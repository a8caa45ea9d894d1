The arguments are 1 1 1 0
The value of arg4 should be 1
The value of arg5 should be 0

