// HashSetRef: the iteration order of java.util.HashSet<Double>, which
// SystemDS's unique() returns its values in, for braid's tests
// (tests/test_reorg.c's unique_java_order). Reads a matrix, one row per
// line of blank-separated numbers (all rows equally long), and prints
// unique(X, dir) as SystemDS's LibMatrixSketch computes it: "rc" the
// distinct values of all cells row-major, "r"/"c" per row/column with one
// set cleared between them over two passes (the first sizes the output).
// Prints the values' Double.doubleToLongBits, one output row per line,
// then "fnv" and the FNV-1a 64 hash of all printed bits in order.
// Mode "str": each line's tab-separated tokens put into a
// HashMap<String, Integer> in order (SystemDS's recode map); prints the
// tokens' insertion ranks (0-based) in the map's iteration order.
//
//   java -cp . HashSetRef rc|r|c < matrix.txt
//   java -cp . HashSetRef str < tokens.txt
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;

public class HashSetRef {
    static long fnv = 0xcbf29ce484222325L;

    static void emit(StringBuilder sb, double v) {
        long b = Double.doubleToLongBits(v);
        sb.append(b).append(' ');
        fnv = (fnv ^ b) * 0x100000001b3L;
    }

    public static void main(String[] args) throws Exception {
        String dir = args[0];
        if (dir.equals("str")) {
            BufferedReader r = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
            StringBuilder sb = new StringBuilder();
            for (String line; (line = r.readLine()) != null;) {
                java.util.HashMap<String, Integer> m = new java.util.HashMap<>();
                for (String t : line.split("\t", -1))
                    if (!t.isEmpty() && !m.containsKey(t)) m.put(t, m.size());
                for (Integer v : m.values()) sb.append(v).append(' ');
                sb.append('\n');
            }
            System.out.print(sb);
            return;
        }
        List<double[]> rows = new ArrayList<>();
        BufferedReader r = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = r.readLine()) != null;) {
            line = line.trim();
            if (line.isEmpty()) continue;
            String[] t = line.split("\\s+");
            double[] row = new double[t.length];
            for (int j = 0; j < t.length; j++) row[j] = Double.parseDouble(t[j]);
            rows.add(row);
        }
        int m = rows.size(), n = m > 0 ? rows.get(0).length : 0;
        StringBuilder sb = new StringBuilder();
        HashSet<Double> s = new HashSet<>();
        if (dir.equals("rc")) {
            for (double[] row : rows) for (double v : row) s.add(v);
            for (Double v : s) { emit(sb, v); sb.append('\n'); }
        } else {
            boolean byRow = dir.equals("r");
            int lines = byRow ? m : n, len = byRow ? n : m, width = 0;
            for (int l = 0; l < lines; l++) {
                s.clear();
                for (int k = 0; k < len; k++) s.add(byRow ? rows.get(l)[k] : rows.get(k)[l]);
                width = Math.max(width, s.size());
            }
            double[][] out = byRow ? new double[m][width] : new double[width][n];
            for (int l = 0; l < lines; l++) {
                s.clear();
                for (int k = 0; k < len; k++) s.add(byRow ? rows.get(l)[k] : rows.get(k)[l]);
                int pos = 0;
                for (Double v : s) {
                    if (byRow) out[l][pos++] = v; else out[pos++][l] = v;
                }
            }
            for (double[] row : out) { for (double v : row) emit(sb, v); sb.append('\n'); }
        }
        System.out.print(sb);
        System.out.println("fnv " + Long.toUnsignedString(fnv, 16));
    }
}
