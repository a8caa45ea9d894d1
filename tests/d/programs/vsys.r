k=0 a6=0 a9=0 caller=c0de00
k=1 a6=0 a9=0 caller=c0de00

