
  alpha                                                             0                0                8
  alpha                                                             1                0                7
  beta                                                              0                0                7
  beta                                                              1                0                7
  gamma                                                             0                0                7
  gamma                                                             1                0                7
  alpha                                                             0                1                7
  alpha                                                             1                1                7
  beta                                                              0                1                7
  beta                                                              1                1                8
  gamma                                                             0                1                7
  gamma                                                             1                1                7
