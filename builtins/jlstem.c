/* jlstem.c: map()'s PorterStemmer.stem(x), the Porter stemmer as
 * SystemDS's own PorterStemmer class computes it (read from its Java
 * source), so that pipelines' string cleaning (map(X, "x ->
 * PorterStemmer.stem(x)")) gives SystemDS's words. SystemDS's variant
 * differs from Porter's paper in places, kept here:
 *   - the measure m counts every consonant run that follows position 0;
 *   - step 1's "eed" rule tests m of the whole word (> 1);
 *   - steps 2 and 3 try their suffixes in the iteration order of a Java
 *     HashMap of Strings (the tables below are in that order: buckets
 *     of String.hashCode spread as h ^ (h >>> 16), 64 buckets for step
 *     2's 26 entries and 16 for step 3's 7), and the first suffix the
 *     word ends with decides, replaced or not;
 *   - step 4 removes "ion" when the fourth-last letter is s or t;
 *   - step 5's tests run one after another on the updated word.
 * Words are byte strings (SystemDS works on UTF-16 units; the rules only
 * look at ASCII letters). */
#include "jlint.h"

#include <stdbool.h>
#include <string.h>

typedef struct Word { char *s; int n; } Word;

static bool cons(const char *s, int i)
{
    if (strchr("aeiou", s[i]) && s[i]) return false;
    if (s[i] == 'y') return i == 0 ? true : !cons(s, i - 1);
    return true;
}

/* consonant runs after the first letter (SystemDS's calcM) */
static int measure(const char *s, int n)
{
    int count = 0;
    bool run = false;
    for (int c = 0; c < n; c++) {
        if (cons(s, c)) {
            if (!run && c != 0) count++;
            run = true;
        } else {
            run = false;
        }
    }
    return count;
}

static bool ends(const Word *w, const char *suf)
{
    int l = (int)strlen(suf);
    return w->n >= l && !memcmp(w->s + w->n - l, suf, (size_t)l);
}

static void cut(Word *w, int k) { w->n -= k; w->s[w->n] = 0; }

static void add(Word *w, const char *t)
{
    size_t l = strlen(t);
    memcpy(w->s + w->n, t, l + 1);
    w->n += (int)l;
}

static bool doublec(const Word *w)
{
    int l = w->n - 1;
    return l >= 1 && w->s[l] == w->s[l - 1] && cons(w->s, l);
}

/* consonant - vowel - consonant at the end, the last not w, x or y */
static bool cvc(const char *s, int n)
{
    int l = n - 1;
    if (n < 3 || !cons(s, l) || cons(s, l - 1) || !cons(s, l - 2)) return false;
    return !strchr("wxy", s[l]);
}

static bool vowel_in_stem(const Word *w, int suffix)
{
    for (int i = 0; i < w->n - suffix; i++)
        if (!cons(w->s, i)) return true;
    return false;
}

/* SystemDS's replacer: when w ends with suf, its stem gets rep if the
 * stem's measure exceeds mc (else w stays); true when w ends with suf */
static bool replace_suffix(Word *w, const char *suf, const char *rep, int mc)
{
    if (!ends(w, suf)) return false;
    int stem = w->n - (int)strlen(suf);
    if (measure(w->s, stem) > mc) {
        cut(w, w->n - stem);
        add(w, rep);
    }
    return true;
}

static void step1(Word *w)
{
    bool flag = false;
    if (ends(w, "s")) {
        if (ends(w, "sses")) cut(w, 2);
        else if (ends(w, "ies")) { cut(w, 3); add(w, "i"); }
        else if (!ends(w, "ss")) cut(w, 1);
    }
    if (ends(w, "eed")) {
        if (measure(w->s, w->n) > 1) cut(w, 1);
    } else if (ends(w, "ed") && vowel_in_stem(w, 2)) {
        cut(w, 2);
        flag = true;
    } else if (ends(w, "ing") && vowel_in_stem(w, 3)) {
        cut(w, 3);
        flag = true;
    }
    if (flag && w->n > 0) {
        if (ends(w, "at") || ends(w, "bl") || ends(w, "iz")) add(w, "e");
        int m = measure(w->s, w->n);
        if (doublec(w) && !strchr("lsz", w->s[w->n - 1])) cut(w, 1);
        else if (m == 1 && cvc(w->s, w->n)) add(w, "e");
    }
    if (ends(w, "y") && vowel_in_stem(w, 1)) { cut(w, 1); add(w, "i"); }
}

typedef struct Rule { const char *suf, *rep; } Rule;

/* Java HashMap iteration order of SystemDS's step-2 and step-3 maps */
static const Rule step2_rules[] = {
    {"alize", "al"}, {"alli", "al"}, {"log", "logi"}, {"ative", ""}, {"ational", "ate"}, {"biliti", "ble"},
    {"ization", "ize"}, {"icate", "ic"}, {"tional", "tion"}, {"ousli", "ous"}, {"aliti", "al"},
    {"fulness", "ful"}, {"bli", "ble"}, {"enci", "ence"}, {"eli", "e"}, {"iveness", "ive"}, {"ousness", "ous"},
    {"entli", "ent"}, {"izer", "ize"}, {"iviti", "ive"}, {"alism", "al"}, {"iciti", "ic"}, {"ical", "ic"},
    {"ation", "ate"}, {"ator", "ate"}, {"anci", "ance"},
};
static const Rule step3_rules[] = {
    {"alize", "al"}, {"iciti", "ic"}, {"ical", "ic"}, {"ness", ""}, {"ative", ""}, {"ful", ""}, {"icate", "ic"},
};

static bool first_rule(Word *w, const Rule *r, int n, int mc)
{
    for (int i = 0; i < n; i++)
        if (replace_suffix(w, r[i].suf, r[i].rep, mc)) return true;
    return false;
}

static void step4(Word *w)
{
    static const Rule first[] = {{"al", ""}, {"ance", ""}, {"ence", ""}, {"er", ""}, {"ic", ""}, {"able", ""},
                                 {"ible", ""}, {"ant", ""}, {"ement", ""}, {"ment", ""}, {"ent", ""}};
    static const Rule last[] = {{"ou", ""}, {"ism", ""}, {"ate", ""}, {"iti", ""}, {"ous", ""}, {"ive", ""},
                                {"ize", ""}};
    if (first_rule(w, first, (int)(sizeof first / sizeof first[0]), 1)) return;
    if (w->n > 4 && (w->s[w->n - 4] == 's' || w->s[w->n - 4] == 't') && replace_suffix(w, "ion", "", 1)) return;
    first_rule(w, last, (int)(sizeof last / sizeof last[0]), 1);
}

static void step5(Word *w)
{
    int stem = ends(w, "e") ? w->n - 1 : w->n;   /* the word without a final e */
    if (ends(w, "e") && measure(w->s, w->n) > 1) cut(w, w->n - stem);
    if (ends(w, "e") && measure(w->s, w->n) == 1 && !cvc(w->s, stem)) cut(w, w->n - stem);
    if (ends(w, "l") && doublec(w) && measure(w->s, w->n) > 1) cut(w, 1);
}

/* out: room for n + 3 bytes; returns the stem's length */
size_t jl_porter_stem(const char *s, size_t n, char *out)
{
    memcpy(out, s, n);
    out[n] = 0;
    Word w = {out, (int)n};
    if (w.n >= 3) {
        step1(&w);
        if (w.n > 0) first_rule(&w, step2_rules, (int)(sizeof step2_rules / sizeof step2_rules[0]), 0);
        if (w.n > 0) first_rule(&w, step3_rules, (int)(sizeof step3_rules / sizeof step3_rules[0]), 0);
        step4(&w);
        if (w.n > 0) step5(&w);
    }
    return (size_t)w.n;
}
