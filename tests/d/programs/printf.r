hello from BEGIN
k=0 name=alpha s=fake-string
k=2 name=gamma s=fake-string
k=4 name=beta s=fake-string
k=1 name=beta s=fake-string
k=3 name=alpha s=fake-string

