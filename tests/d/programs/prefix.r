CPU     ID                    FUNCTION:NAME
  0      1                           :BEGIN           1
  0      2                             :END           2

