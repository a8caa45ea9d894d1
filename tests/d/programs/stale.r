after 10 firings: 10

