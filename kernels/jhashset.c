/* jhashset.c: Java's HashSet<Double> iteration order (jhashset.h). The
 * table, list and tree steps follow java.util.HashMap's documented
 * behaviour (OpenJDK 8 and later): hash = h ^ (h >>> 16) of
 * Double.hashCode, bucket = hash & (cap - 1); a bucket list longer than 8
 * becomes a red-black tree ordered by (signed) hash, then by
 * Double.compare, whose root heads the bucket's list; a resize splits each
 * bucket into a low and a high list in order, a tree part of 6 or fewer
 * keys turning back into a list. */
#include "jhashset.h"

#include <stdlib.h>
#include <string.h>

#include "../base/base.h"

struct JNode {
    double key;
    const char *str;   /* a String key (UTF-8, the caller's), or NULL */
    uint64_t bits;     /* Double.doubleToLongBits (NaN canonical) */
    int32_t hash;      /* spread hash, signed as Java's int */
    int64_t next, prev, parent;
    int64_t kid[2];    /* left, right */
    bool red, tree;
};

enum { TREEIFY = 8, UNTREEIFY = 6, MIN_TREE_CAP = 64 };

static uint64_t dbits(double x)
{
    if (x != x) return 0x7ff8000000000000ULL;
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static int32_t spread(uint64_t bits)
{
    uint32_t h = (uint32_t)(bits ^ (bits >> 32));
    return (int32_t)(h ^ (h >> 16));
}

/* The next UTF-16 code unit of UTF-8 text *p (a pending low surrogate in
 * *low); -1 at the end. Malformed bytes count as themselves. */
static int utf16_next(const unsigned char **p, int *low)
{
    if (*low >= 0) {
        int u = *low;
        *low = -1;
        return u;
    }
    const unsigned char *q = *p;
    if (!*q) return -1;
    uint32_t c = q[0];
    int n = c >= 0xf0 && c < 0xf8 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
    if (c >= 0xf8 || (c >= 0x80 && c < 0xc0)) n = 0;
    c = n == 3 ? c & 7 : n == 2 ? c & 15 : n == 1 ? c & 31 : c;
    int k = 1;
    for (; k <= n && (q[k] & 0xc0) == 0x80; k++) c = (c << 6) | (q[k] & 63);
    if (k <= n) { c = q[0]; k = 1; }   /* truncated: the byte itself */
    *p = q + k;
    if (c >= 0x10000) {
        c -= 0x10000;
        *low = (int)(0xdc00 + (c & 0x3ff));
        return (int)(0xd800 + (c >> 10));
    }
    return (int)c;
}

/* Java's String.hashCode over the UTF-16 code units of s */
static int32_t string_hash(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    int low = -1;
    uint32_t h = 0;
    for (int u; (u = utf16_next(&p, &low)) >= 0;) h = 31 * h + (uint32_t)u;
    return (int32_t)h;
}

/* Java's String.compareTo: UTF-16 code units, then length */
static int scompare(const char *a, const char *b)
{
    const unsigned char *p = (const unsigned char *)a, *q = (const unsigned char *)b;
    int la = -1, lb = -1;
    for (;;) {
        int x = utf16_next(&p, &la), y = utf16_next(&q, &lb);
        if (x != y) return x < 0 ? -1 : y < 0 ? 1 : x < y ? -1 : 1;
        if (x < 0) return 0;
    }
}

/* Double.compare(a, b) of distinct keys by their bits (String.compareTo
 * for String keys) */
static int dcompare(const JNode *a, const JNode *b)
{
    if (a->str) return scompare(a->str, b->str);
    if (a->key < b->key) return -1;
    if (a->key > b->key) return 1;
    int64_t x = (int64_t)a->bits, y = (int64_t)b->bits;
    return x == y ? 0 : x < y ? -1 : 1;
}

void jhs_init(JHashSet *s) { memset(s, 0, sizeof *s); }

void jhs_init_cap(JHashSet *s, int64_t c)
{
    memset(s, 0, sizeof *s);
    int64_t t = 1;   /* HashMap.tableSizeFor */
    while (t < c) t *= 2;
    s->init = t;
}

void jhs_free(JHashSet *s)
{
    free(s->nodes);
    free(s->tab);
    memset(s, 0, sizeof *s);
}

void jhs_clear(JHashSet *s)
{
    s->n = 0;
    for (int64_t i = 0; i < s->cap; i++) s->tab[i] = -1;
}

#define N(i) (s->nodes[i])

/* HashMap.TreeNode's rotateLeft (d = 0) and rotateRight (d = 1) of p:
 * its child on side 1 - d takes its place. Returns the root. */
static int64_t rotate(JHashSet *s, int64_t root, int64_t p, int d)
{
    int64_t c, pp, cc;
    if (p >= 0 && (c = N(p).kid[1 - d]) >= 0) {
        if ((cc = N(p).kid[1 - d] = N(c).kid[d]) >= 0) N(cc).parent = p;
        if ((pp = N(c).parent = N(p).parent) < 0) {
            root = c;
            N(c).red = false;
        } else {
            N(pp).kid[N(pp).kid[0] == p ? 0 : 1] = c;
        }
        N(c).kid[d] = p;
        N(p).parent = c;
    }
    return root;
}

/* HashMap.TreeNode's balanceInsertion; the two mirrored cases as one,
 * side = the side of xp under xpp. Returns the root. */
static int64_t balance_insertion(JHashSet *s, int64_t root, int64_t x)
{
    N(x).red = true;
    for (;;) {
        int64_t xp = N(x).parent, xpp;
        if (xp < 0) {
            N(x).red = false;
            return x;
        }
        if (!N(xp).red || (xpp = N(xp).parent) < 0) return root;
        int side = xp == N(xpp).kid[0] ? 0 : 1;
        int64_t uncle = N(xpp).kid[1 - side];
        if (uncle >= 0 && N(uncle).red) {
            N(uncle).red = false;
            N(xp).red = false;
            N(xpp).red = true;
            x = xpp;
            continue;
        }
        if (x == N(xp).kid[1 - side]) {
            root = rotate(s, root, x = xp, side);
            xp = N(x).parent;
            xpp = xp < 0 ? -1 : N(xp).parent;
        }
        if (xp >= 0) {
            N(xp).red = false;
            if (xpp >= 0) {
                N(xpp).red = true;
                root = rotate(s, root, xpp, 1 - side);
            }
        }
    }
}

/* The tree's root becomes the first node of its bucket's list. */
static void move_root_to_front(JHashSet *s, int64_t root)
{
    int64_t idx = (int64_t)((uint32_t)N(root).hash & (uint64_t)(s->cap - 1));
    int64_t first = s->tab[idx];
    if (root == first) return;
    s->tab[idx] = root;
    int64_t rp = N(root).prev, rn = N(root).next;
    if (rn >= 0) N(rn).prev = rp;
    if (rp >= 0) N(rp).next = rn;
    if (first >= 0) N(first).prev = root;
    N(root).next = first;
    N(root).prev = -1;
}

/* Descends from root to where key x belongs: its parent and side. */
static void tree_place(JHashSet *s, int64_t root, int64_t x, int64_t *xp, int *dir)
{
    int64_t p = root;
    for (;;) {
        int32_t ph = N(p).hash, h = N(x).hash;
        int d = ph > h ? -1 : ph < h ? 1 : dcompare(&N(x), &N(p));
        *xp = p;
        *dir = d;
        if ((p = N(p).kid[d <= 0 ? 0 : 1]) < 0) return;
    }
}

/* Builds a tree of the list starting at head (its order kept). */
static void treeify(JHashSet *s, int64_t head)
{
    int64_t root = -1;
    for (int64_t x = head, next; x >= 0; x = next) {
        next = N(x).next;
        N(x).kid[0] = N(x).kid[1] = -1;
        N(x).tree = true;
        if (root < 0) {
            N(x).parent = -1;
            N(x).red = false;
            root = x;
        } else {
            int64_t xp;
            int dir;
            tree_place(s, root, x, &xp, &dir);
            N(x).parent = xp;
            N(xp).kid[dir <= 0 ? 0 : 1] = x;
            root = balance_insertion(s, root, x);
        }
    }
    move_root_to_front(s, root);
}

static void untreeify(JHashSet *s, int64_t head)
{
    for (int64_t x = head; x >= 0; x = N(x).next) N(x).tree = false;
}

static void split(JHashSet *s, int64_t *tab, int64_t index, int64_t bit, int64_t head)
{
    int64_t lh = -1, lt = -1, hh = -1, ht = -1, lc = 0, hc = 0;
    for (int64_t e = head, next; e >= 0; e = next) {
        next = N(e).next;
        N(e).next = -1;
        if (((uint32_t)N(e).hash & (uint64_t)bit) == 0) {
            if ((N(e).prev = lt) < 0) lh = e;
            else N(lt).next = e;
            lt = e;
            lc++;
        } else {
            if ((N(e).prev = ht) < 0) hh = e;
            else N(ht).next = e;
            ht = e;
            hc++;
        }
    }
    /* the caller's table is s->tab already: treeify's root-to-front
     * works on it */
    if (lh >= 0) {
        tab[index] = lh;
        if (lc <= UNTREEIFY) untreeify(s, lh);
        else if (hh >= 0) treeify(s, lh);
    }
    if (hh >= 0) {
        tab[index + bit] = hh;
        if (hc <= UNTREEIFY) untreeify(s, hh);
        else if (lh >= 0) treeify(s, hh);
    }
}

static int resize(JHashSet *s)
{
    /* HashMap.resize: the first table has the initial capacity (16 by
       default), later ones double; the threshold is 3/4 of the table,
       doubled with it from 16 buckets on */
    int64_t oc = s->cap, nc = oc > 0 ? oc * 2 : s->init > 0 ? s->init : 16;
    int64_t *nt = br_malloc((size_t)nc * sizeof(int64_t));
    if (!nt) return -1;
    for (int64_t i = 0; i < nc; i++) nt[i] = -1;
    int64_t *ot = s->tab;
    s->tab = nt;
    s->cap = nc;
    s->thr = oc >= 16 ? s->thr * 2 : (int64_t)((float)nc * 0.75f);
    for (int64_t j = 0; j < oc; j++) {
        int64_t e = ot[j];
        if (e < 0) continue;
        if (N(e).next < 0) {
            nt[(uint32_t)N(e).hash & (uint64_t)(nc - 1)] = e;
        } else if (N(e).tree) {
            split(s, nt, j, oc, e);
        } else {
            int64_t lh = -1, lt = -1, hh = -1, ht = -1;
            for (int64_t x = e, next; x >= 0; x = next) {
                next = N(x).next;
                if (((uint32_t)N(x).hash & (uint64_t)oc) == 0) {
                    if (lt < 0) lh = x;
                    else N(lt).next = x;
                    lt = x;
                } else {
                    if (ht < 0) hh = x;
                    else N(ht).next = x;
                    ht = x;
                }
            }
            if (lt >= 0) { N(lt).next = -1; nt[j] = lh; }
            if (ht >= 0) { N(ht).next = -1; nt[j + oc] = hh; }
        }
    }
    free(ot);
    return 0;
}

static int64_t new_node(JHashSet *s, double x, const char *str, uint64_t bits, int32_t h)
{
    if (s->n == s->ncap) {
        int64_t nc = s->ncap ? 2 * s->ncap : 64;
        JNode *nn = br_realloc(s->nodes, (size_t)nc * sizeof(JNode));
        if (!nn) return -1;
        s->nodes = nn;
        s->ncap = nc;
    }
    int64_t i = s->n++;
    JNode *z = &s->nodes[i];
    z->key = x;
    z->str = str;
    z->bits = bits;
    z->hash = h;
    z->next = z->prev = z->parent = z->kid[0] = z->kid[1] = -1;
    z->red = z->tree = false;
    return i;
}

/* putTreeVal: the new key as a child in the tree of bucket head `head`,
 * placed in the list right after its parent */
static int tree_add(JHashSet *s, int64_t head, int64_t x)
{
    int64_t root = head;
    while (N(root).parent >= 0) root = N(root).parent;
    int64_t xp;
    int dir;
    tree_place(s, root, x, &xp, &dir);
    int64_t xpn = N(xp).next;
    N(x).tree = true;
    N(x).next = xpn;
    N(xp).kid[dir <= 0 ? 0 : 1] = x;
    N(xp).next = x;
    N(x).parent = N(x).prev = xp;
    if (xpn >= 0) N(xpn).prev = x;
    move_root_to_front(s, balance_insertion(s, root, x));
    return 0;
}

static bool same_key(const JNode *q, uint64_t bits, const char *str, int32_t h)
{
    return q->hash == h && (str ? !strcmp(q->str, str) : q->bits == bits);
}

/* Is key (bits or str, h) in the bucket starting at head? */
static bool has(const JHashSet *s, int64_t head, uint64_t bits, const char *str, int32_t h)
{
    if (head >= 0 && s->nodes[head].tree) {
        /* the tree: by hash, then Double.compare */
        int64_t p = head;
        while (s->nodes[p].parent >= 0) p = s->nodes[p].parent;
        JNode probe = {.bits = bits, .str = str, .hash = h};
        memcpy(&probe.key, &bits, sizeof probe.key);
        while (p >= 0) {
            const JNode *q = &s->nodes[p];
            if (same_key(q, bits, str, h)) return true;
            int d = q->hash > h ? -1 : q->hash < h ? 1 : dcompare(&probe, q);
            p = q->kid[d <= 0 ? 0 : 1];
        }
        return false;
    }
    for (int64_t p = head; p >= 0; p = s->nodes[p].next)
        if (same_key(&s->nodes[p], bits, str, h)) return true;
    return false;
}

static int add(JHashSet *s, double x, const char *str, uint64_t bits, int32_t h)
{
    if (s->cap == 0 && resize(s)) return -1;
    int64_t i = (int64_t)((uint32_t)h & (uint64_t)(s->cap - 1));
    int64_t head = s->tab[i];
    if (has(s, head, bits, str, h)) return 0;
    int64_t z = new_node(s, x, str, bits, h);
    if (z < 0) return -1;
    if (head < 0) {
        s->tab[i] = z;
    } else if (N(head).tree) {
        tree_add(s, head, z);
    } else {
        int64_t count = 1, p = head;
        while (N(p).next >= 0) {
            p = N(p).next;
            count++;
        }
        N(p).next = z;
        /* the list held 8 keys before this one: treeifyBin */
        if (count >= TREEIFY) {
            if (s->cap < MIN_TREE_CAP) {
                if (resize(s)) return -1;
            } else {
                for (int64_t q = s->tab[i], prev = -1; q >= 0; prev = q, q = N(q).next) N(q).prev = prev;
                treeify(s, s->tab[i]);
            }
        }
    }
    if (s->n > s->thr && resize(s)) return -1;
    return 1;
}

int jhs_add(JHashSet *s, double x)
{
    uint64_t bits = dbits(x);
    return add(s, x, NULL, bits, spread(bits));
}

int jhs_add_str(JHashSet *s, const char *str)
{
    uint32_t h = (uint32_t)string_hash(str);
    return add(s, 0, str, 0, (int32_t)(h ^ (h >> 16)));
}

void jhs_order(const JHashSet *s, int64_t *out)
{
    int64_t k = 0;
    for (int64_t i = 0; i < s->cap; i++)
        for (int64_t p = s->tab[i]; p >= 0; p = s->nodes[p].next) out[k++] = p;
}

void jhs_values(const JHashSet *s, double *out)
{
    int64_t k = 0;
    for (int64_t i = 0; i < s->cap; i++)
        for (int64_t p = s->tab[i]; p >= 0; p = s->nodes[p].next) out[k++] = s->nodes[p].key;
}
