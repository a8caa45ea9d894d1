CPU     ID                    FUNCTION:NAME
  0      1                           :BEGIN from -n

  0  88163                     getpid:entry a 0

  0  88163                     getpid:entry a 2

  1  88163                     getpid:entry a 1

  0      2                             :END b end


