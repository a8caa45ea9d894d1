a 100 0 11 0 500
s [] [one] t 33 0 u 11 0
a[i] 500 comm[i] 0
ERROR arg4 11 arg5 8
ERROR arg4 11 arg5 4
ERROR arg4 11 arg5 5
ERROR arg4 11 arg5 20

