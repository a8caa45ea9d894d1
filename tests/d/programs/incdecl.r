predfirst: x - 1 = 0
self->a++ = 0, ++self->b = 1
this->c++ = 0, ++this->d = 1
n = -4, m = 2

