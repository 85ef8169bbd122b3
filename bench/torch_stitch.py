#!/usr/bin/env python3
"""bench/torch_stitch.py: PyTorch's eager kernels for bench_stitch's layers
(layernorm without affine parameters, eps 1e-5, and row softmax), float64
on the first CUDA device, the same X as bench_stitch.c
((i * 7919) % 1000 / 250 - 2 over the row-major cells). Two plans each:
one kernel per operator as an eager script writes it (mean, subtract,
square, mean, add, sqrt, divide; max, subtract, exp, sum, divide), and
PyTorch's own fused kernel (F.layer_norm, torch.softmax). Times as
bench_stitch takes them: X resident, 20 runs enqueued, then a
synchronize; the median of 7 batches, per run. GB/s counts X read and
Y written once. Prints one line per layer and shape."""
import torch
import torch.nn.functional as F

SHAPES = [("layernorm", 4096, 1024), ("layernorm", 65536, 16), ("softmax", 4096, 1024),
          ("layernorm", 65536, 1024), ("layernorm", 1048576, 16), ("softmax", 65536, 1024)]
BATCH, REPS = 20, 7


def ln_ops(x):
    mu = x.mean(dim=1, keepdim=True)
    c = x - mu
    var = (c * c).mean(dim=1, keepdim=True)
    return c / torch.sqrt(var + 1e-5)


def sm_ops(x):
    m = x.amax(dim=1, keepdim=True)
    e = torch.exp(x - m)
    return e / e.sum(dim=1, keepdim=True)


def ln_fused(x):
    return F.layer_norm(x, (x.shape[1],), eps=1e-5)


def sm_fused(x):
    return torch.softmax(x, dim=1)


def timed(f, x):
    for _ in range(3):
        f(x)
    torch.cuda.synchronize()
    ts = []
    for _ in range(REPS):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(BATCH):
            f(x)
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b) / BATCH)
    return sorted(ts)[REPS // 2]


def main():
    dev = torch.device("cuda")
    print("device: %s, torch %s, float64" % (torch.cuda.get_device_name(0), torch.__version__))
    for name, rows, cols in SHAPES:
        i = torch.arange(rows * cols, dtype=torch.int64, device=dev)
        x = (((i * 7919) % 1000).to(torch.float64) / 250.0 - 2).reshape(rows, cols)
        ops, fused = (ln_ops, ln_fused) if name == "layernorm" else (sm_ops, sm_fused)
        err = (ops(x) - fused(x)).abs().max().item()
        to, tf = timed(ops, x), timed(fused, x)
        gb = 2.0 * rows * cols * 8 / 1e9
        print("%s %dx%d: eager per operator %.3f ms, fused %.3f ms (%.0f GB/s); max |ops - fused| %.2g"
              % (name, rows, cols, to, tf, gb / (tf / 1e3), err))


if __name__ == "__main__":
    main()
