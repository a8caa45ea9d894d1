BEGIN epid=1 id=1
getpid epid=2
getpid epid=2
getpid epid=2
second epid=3
getpid epid=2
END epid=4 id=2

