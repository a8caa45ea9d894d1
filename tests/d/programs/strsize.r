strlen 5 [12345] [abcde] equal 1 key 1
[12345]

