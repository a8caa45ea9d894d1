ERROR arg1=2

