tick at k=1: 100000
tick at k=20001: 0
tick at k=40001: 0
tick at k=60001: 0
tick at k=80001: 0
tick at k=100001: 0
tick at k=120001: 0
tick at k=140001: 0
tick at k=160001: 0
tick at k=180001: 0
end: 0
total: 100000

