k=0 caller=c0de00 a6=c0de01 a7=c0de02 a8=c0de03 a9=c0de04 p6=c0de01
k=2 caller=c0de00 a6=c0de01 a7=c0de02 a8=c0de03 a9=c0de04 p6=c0de01
k=1 caller=c0de00 a6=c0de01 a7=c0de02 a8=c0de03 a9=c0de04 p6=c0de01

