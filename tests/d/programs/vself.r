fsr
k=290 prev=275
k=292 prev=277
k=294 prev=279
k=296 prev=281
k=298 prev=283
k=291 prev=276
k=293 prev=278
k=295 prev=280
k=297 prev=282
k=299 prev=284

