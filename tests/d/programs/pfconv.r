[Tue, 14 Nov 2023 22:13:20 UTC] [gamma\0] [A] [\n] [ffff] [ff] [ff] [3]

