// Reference for braid's map() date helpers (builtins/jldate.c): the JDK's
// HashMap, SimpleDateFormat (lenient, Locale.US, UTC) and Calendar.add, used
// the way SystemDS's UtilFunctions describes (its format table, the dominant
// format as Stream.max over a HashMap of counts with a comparator that never
// answers 0). Prints one line per query: input TAB result. Queries (tab
// separated, one per line): dom DATES..., ts DATE, add DATE N UNIT, millis
// DATE [PATTERN], format DATE [IN] OUT, formatms MILLIS PATTERN.
import java.text.SimpleDateFormat;
import java.util.*;

public class DateRef {
    static final String[][] F = {
        {"^\\d{4}-\\d{1,2}-\\d{1,2}\\s\\d{1,2}:\\d{2}:\\d{2}$", "yyyy-MM-dd HH:mm:ss"},
        {"^\\d{1,2}-\\d{1,2}-\\d{4}\\s\\d{1,2}:\\d{2}:\\d{2}$", "dd-MM-yyyy HH:mm:ss"},
        {"^\\d{1,2}/\\d{1,2}/\\d{4}\\s\\d{1,2}:\\d{2}:\\d{2}$", "MM/dd/yyyy HH:mm:ss"},
        {"^\\d{4}/\\d{1,2}/\\d{1,2}\\s\\d{1,2}:\\d{2}:\\d{2}$", "yyyy/MM/dd HH:mm:ss"},
        {"^\\d{1,2}\\s[a-z]{3}\\s\\d{4}\\s\\d{1,2}:\\d{2}:\\d{2}$", "dd MMM yyyy HH:mm:ss"},
        {"^\\d{1,2}\\s[a-z]{4,}\\s\\d{4}\\s\\d{1,2}:\\d{2}:\\d{2}$", "dd MMMM yyyy HH:mm:ss"},
        {"^\\d{8}$", "yyyyMMdd"}, {"^\\d{1,2}-\\d{1,2}-\\d{4}$", "dd-MM-yyyy"},
        {"^\\d{4}-\\d{1,2}-\\d{1,2}$", "yyyy-MM-dd"}, {"^\\d{1,2}/\\d{1,2}/\\d{4}$", "MM/dd/yyyy"},
        {"^\\d{4}/\\d{1,2}/\\d{1,2}$", "yyyy/MM/dd"}, {"^\\d{1,2}\\s[a-z]{3}\\s\\d{4}$", "dd MMM yyyy"},
        {"^\\d{1,2}\\s[a-z]{4,}\\s\\d{4}$", "dd MMMM yyyy"}, {"^\\d{12}$", "yyyyMMddHHmm"},
        {"^\\d{8}\\s\\d{4}$", "yyyyMMdd HHmm"},
        {"^\\d{1,2}-\\d{1,2}-\\d{4}\\s\\d{1,2}:\\d{2}$", "dd-MM-yyyy HH:mm"},
        {"^\\d{4}-\\d{1,2}-\\d{1,2}\\s\\d{1,2}:\\d{2}$", "yyyy-MM-dd HH:mm"},
        {"^\\d{1,2}/\\d{1,2}/\\d{4}\\s\\d{1,2}:\\d{2}$", "MM/dd/yyyy HH:mm"},
        {"^\\d{4}/\\d{1,2}/\\d{1,2}\\s\\d{1,2}:\\d{2}$", "yyyy/MM/dd HH:mm"},
        {"^\\d{1,2}\\s[a-z]{3}\\s\\d{4}\\s\\d{1,2}:\\d{2}$", "dd MMM yyyy HH:mm"},
        {"^\\d{1,2}\\s[a-z]{4,}\\s\\d{4}\\s\\d{1,2}:\\d{2}$", "dd MMMM yyyy HH:mm"},
        {"^\\d{14}$", "yyyyMMddHHmmss"}, {"^\\d{8}\\s\\d{6}$", "yyyyMMdd HHmmss"}};
    static final Map<String, String> M = new HashMap<>();
    static { for (String[] f : F) M.put(f[0], f[1]); }

    static String fmt(String s) {
        for (String k : M.keySet()) if (s.toLowerCase().matches(k)) return M.get(k);
        return null;
    }
    static SimpleDateFormat sdf(String p) {
        SimpleDateFormat d = new SimpleDateFormat(p, Locale.US);
        d.setTimeZone(TimeZone.getTimeZone("UTC"));
        return d;
    }
    static String dominant(String[] v) throws Exception {
        Map<String, Integer> c = new HashMap<>();
        for (String k : M.keySet()) c.put(M.get(k), 0);
        for (String s : v) c.put(fmt(s), c.get(fmt(s)) + 1);
        String dom = c.entrySet().stream().max((a, b) -> a.getValue() > b.getValue() ? 1 : -1).get().getKey();
        StringBuilder o = new StringBuilder();
        for (String s : v) o.append(sdf(dom).format(sdf(fmt(s)).parse(s))).append('|');
        return o.toString();
    }
    static String add(String s, int n, String u) throws Exception {
        SimpleDateFormat d = sdf(fmt(s));
        Calendar c = Calendar.getInstance(TimeZone.getTimeZone("UTC"), Locale.US);
        c.setTime(d.parse(s));
        int f = u.equals("ms") ? Calendar.MILLISECOND : u.equals("m") ? Calendar.MINUTE : u.equals("H") ? Calendar.HOUR_OF_DAY
              : u.equals("d") ? Calendar.DAY_OF_MONTH : u.equals("w") ? Calendar.WEEK_OF_YEAR : u.equals("M") ? Calendar.MONTH
              : u.equals("y") ? Calendar.YEAR : Calendar.SECOND;
        c.add(f, n);
        return d.format(c.getTime());
    }
    public static void main(String[] a) throws Exception {
        Scanner in = new Scanner(System.in);
        while (in.hasNextLine()) {
            String[] q = in.nextLine().split("\t");
            String r;
            if (q[0].equals("dom")) r = dominant(Arrays.copyOfRange(q, 1, q.length));
            else if (q[0].equals("ts")) r = String.valueOf(sdf(fmt(q[1])).parse(q[1]).getTime());
            else if (q[0].equals("millis")) r = String.valueOf(sdf(q.length > 2 ? q[2] : fmt(q[1])).parse(q[1]).getTime());
            else if (q[0].equals("format")) r = sdf(q[3]).format(sdf(q[2].isEmpty() ? fmt(q[1]) : q[2]).parse(q[1]));
            else if (q[0].equals("formatms")) r = sdf(q[2]).format(new Date(Long.parseLong(q[1])));
            else r = add(q[1], Integer.parseInt(q[2]), q[3]);
            System.out.println(String.join("\t", q) + "\t=> " + r);
        }
    }
}
