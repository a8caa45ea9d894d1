expected run-time error
