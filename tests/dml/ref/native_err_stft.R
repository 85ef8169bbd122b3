source("ref/_common.R")
# hand-written: the window-size error of stft (kernels/fft.c)
wlines("error.txt", c("nonzero", "stft", "windowSize", "power of two"))
