// RandRef: reference draws of SystemDS's rand() and sample() for braid's
// tests (tests/test_gen.c's SystemDS stream checks). Our own transcription
// of the algorithm LibMatrixDatagen describes (block seeds from a WELL1024a
// seeded by java.util.Random(seed).nextInt() x 32, one value stream per
// block, a cell-selection stream seeded from the value stream's first
// draw, geometric skips for sparse blocks, per-cell Bernoulli draws for
// dense ones), run on the JDK's java.util.Random and on Apache Commons
// Math 3's Well1024a and PoissonDistribution (needs commons-math3 on the
// class path). Prints one value per line (Double.toString, exact).
//
// PDF cb_uniform and cb_normal: SystemDS's counter-based generators
// (PhiloxUniformCBPRNGenerator, PhiloxNormalCBPRNGenerator), our own
// transcription of Philox4x64-10 (Salmon et al., SC 2011; the key
// (seed, seed), words w as w * 2^-64 + 0.5) and of how LibMatrixDatagen
// runs them on one thread: dense blocks only, the counter from 0 carried
// from block to block, each block's draw advancing it by its count / 4
// (a normal block draws count + count % 2 uniforms, Box-Muller pairs).
//
//   java -cp commons-math3.jar:. RandRef rand ROWS COLS MIN MAX SPARSITY PDF LAMBDA SEED BLEN
//   java -cp . RandRef sample RANGE SIZE REPLACE SEED
import java.util.Random;
import org.apache.commons.math3.distribution.PoissonDistribution;
import org.apache.commons.math3.random.Well1024a;

public class RandRef {
    interface Gen { void seed(long s); double next(); }

    static Gen uniform() {
        Random r = new Random();
        return new Gen() {
            public void seed(long s) { r.setSeed(s); }
            public double next() { return r.nextDouble(); }
        };
    }

    static Gen normal() {
        Random r = new Random();
        double[] pair = new double[2];
        boolean[] second = new boolean[1];
        Runnable draw = () -> {
            double u1 = r.nextDouble(), u2 = r.nextDouble();
            double a = Math.sqrt(-2 * Math.log(u1)), b = 2 * Math.PI * u2;
            pair[0] = a * Math.cos(b);
            pair[1] = a * Math.sin(b);
        };
        return new Gen() {
            public void seed(long s) { r.setSeed(s); draw.run(); second[0] = false; }
            public double next() {
                if (!second[0]) { second[0] = true; return pair[0]; }
                double d = pair[1];
                draw.run();
                second[0] = false;
                return d;
            }
        };
    }

    static Gen poisson(double mean) {
        PoissonDistribution[] p = new PoissonDistribution[1];
        return new Gen() {
            public void seed(long s) {
                Well1024a w = new Well1024a();
                w.setSeed(s);
                p[0] = new PoissonDistribution(w, mean, PoissonDistribution.DEFAULT_EPSILON,
                    PoissonDistribution.DEFAULT_MAX_ITERATIONS);
            }
            public double next() { return p[0].sample(); }
        };
    }

    // SystemDS's in-memory sparse decision (MCSR estimate against dense).
    static boolean sparseBlock(long rows, long cols, long nnz) {
        double sp = (double) nnz / rows / cols;
        if (!(sp < 0.4) || cols <= 1) return false;
        double dense = 96 + 8.0 * rows * cols;
        if (sp == 0) return true;
        double n = Math.ceil(sp * rows * cols), rlen = Math.min(rows, n);
        double cnnz = Math.max(4, n / rlen);
        double sparse = 48 + 8.0 * rows + rlen * (88 + 12 * Math.max(1, cnnz));
        return (long) sparse < (long) dense;
    }

    static long mulhi(long a, long b) {   // unsigned high word of a * b
        return Math.multiplyHigh(a, b) + ((a >> 63) & b) + ((b >> 63) & a);
    }

    // Philox4x64-10: the four words at counter c under key (k0, k1).
    static long[] philox(long k0, long k1, long[] c) {
        long c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3];
        final long m0 = 0xD2E7470EE14C6C93L, m1 = 0xCA5A826395121157L;
        for (int r = 0; r < 10; r++) {
            long hi0 = mulhi(m0, c0), lo0 = m0 * c0, hi1 = mulhi(m1, c2), lo1 = m1 * c2;
            c0 = hi1 ^ c1 ^ k0;
            c2 = hi0 ^ c3 ^ k1;
            c1 = lo1;
            c3 = lo0;
            k0 += 0x9E3779B97F4A7C15L;
            k1 += 0xBB67AE8584CAA73BL;
        }
        return new long[] {c0, c1, c2, c3};
    }

    static void inc(long[] c) {
        for (int i = 0; i < 4 && ++c[i] == 0; i++) { }
    }

    // One block's n values from counter ctr (advanced by the draws / 4).
    static double[] cbBlock(boolean normal, long seed, long[] ctr, int n) {
        int nu = normal ? n + n % 2 : n;
        double[] u = new double[nu];
        long[] c = ctr.clone();
        for (int t = 0; t < nu; t += 4) {
            long[] w = philox(seed, seed, c);
            inc(c);
            for (int q = 0; q < 4 && t + q < nu; q++) u[t + q] = w[q] * (0.5 / Long.MAX_VALUE) + 0.5;
        }
        for (int t = 0; t < nu / 4; t++) inc(ctr);
        if (!normal) return u;
        double[] v = new double[n];
        for (int i = 0; i < n; i += 2) {
            double a = Math.sqrt(-2 * Math.log(u[i])), b = 2 * Math.PI * u[i + 1];
            v[i] = a * Math.cos(b);
            if (i + 1 < n) v[i + 1] = a * Math.sin(b);
        }
        return v;
    }

    static void rand(int rows, int cols, double min, double max, double sp, String pdf,
                     double lambda, long seed, int blen) {
        double[] out = new double[rows * cols];
        boolean counterBased = pdf.startsWith("cb_");
        long[] ctr = new long[4];
        Gen g = pdf.equals("normal") ? normal() : pdf.equals("poisson") ? poisson(lambda) : uniform();
        if (!pdf.equals("uniform")) { min = 0; max = 1; }
        double range = max - min;
        Random init = new Random(seed);
        int[] s32 = new int[32];
        for (int i = 0; i < 32; i++) s32[i] = init.nextInt();
        Well1024a big = new Well1024a();
        big.setSeed(s32);
        int nrb = (rows + blen - 1) / blen, ncb = (cols + blen - 1) / blen;
        long[] seeds = new long[nrb * ncb];
        for (int l = 0; l < seeds.length; l++) seeds[l] = big.nextLong();
        Random sel = new Random(0);
        for (int rb = 0; rb < nrb; rb++)
            for (int cb = 0; cb < ncb; cb++) {
                int r0 = rb * blen, c0 = cb * blen;
                int br = Math.min(blen, rows - r0), bc = Math.min(blen, cols - c0);
                if (counterBased) {
                    double[] v = cbBlock(pdf.equals("cb_normal"), seeds[rb * ncb + cb], ctr, br * bc);
                    for (int i = 0; i < br; i++)
                        for (int j = 0; j < bc; j++) out[(r0 + i) * cols + c0 + j] = v[i * bc + j];
                    continue;
                }
                g.seed(seeds[rb * ncb + cb]);
                sel.setSeed((long) (g.next() * Long.MAX_VALUE));
                if (sp < 1 && sparseBlock(br, bc, (long) (sp * br * bc))) {
                    double l1 = Math.log(1 - sp);
                    long idx = 0, n = (long) br * bc;
                    while (idx < n) {
                        idx += (long) Math.ceil(Math.log(sel.nextDouble()) / l1);
                        if (idx > n) break;
                        int i = (int) (idx - 1) / bc, j = (int) (idx - 1) % bc;
                        out[(r0 + i) * cols + c0 + j] = min + range * g.next();
                    }
                } else {
                    for (int i = 0; i < br; i++)
                        for (int j = 0; j < bc; j++)
                            if (sp >= 1 || sel.nextDouble() <= sp)
                                out[(r0 + i) * cols + c0 + j] = min + range * g.next();
                }
            }
        StringBuilder sb = new StringBuilder();
        for (double v : out) sb.append(v).append('\n');
        System.out.print(sb);
    }

    static void sample(long range, int size, boolean replace, long seed) {
        double[] a = new double[size];
        Random r = new Random(seed);
        if (!replace) {
            for (int i = 0; i < size; i++) a[i] = i + 1;
            for (int i = size + 1; i <= range; i++)
                if (r.nextInt(i) < size) a[r.nextInt(size)] = i;
            for (int i = 0; i < size - 1; i++) {
                int j = r.nextInt(size - i) + i;
                double t = a[i]; a[i] = a[j]; a[j] = t;
            }
        } else {
            for (int i = 0; i < size; i++) {
                long bits, val;
                do {
                    bits = (r.nextLong() << 1) >>> 1;
                    val = bits % range;
                } while (bits - val + (range - 1) < 0L);
                a[i] = 1 + val;
            }
        }
        for (double v : a) System.out.println(v);
    }

    public static void main(String[] x) {
        if (x[0].equals("rand"))
            rand(Integer.parseInt(x[1]), Integer.parseInt(x[2]), Double.parseDouble(x[3]),
                 Double.parseDouble(x[4]), Double.parseDouble(x[5]), x[6], Double.parseDouble(x[7]),
                 Long.parseLong(x[8]), Integer.parseInt(x[9]));
        else
            sample(Long.parseLong(x[1]), Integer.parseInt(x[2]), Boolean.parseBoolean(x[3]),
                   Long.parseLong(x[4]));
    }
}
