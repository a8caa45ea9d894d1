CPU     ID                    FUNCTION:NAME
  0  88163                     getpid:entry                   16

