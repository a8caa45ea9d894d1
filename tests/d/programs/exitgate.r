k=0
after k=0
k=2
k=1
after k=1
end

