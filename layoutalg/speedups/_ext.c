/* layoutalg.speedups._ext: the C fast path of Layout's construction and of coalesce.
 *
 * Optional: setup.py builds it when a C compiler is there, and layoutalg runs the same code in
 * pure Python without it (or with LAYOUTALG_PURE_PYTHON=1). It knows one thing only: shapes and
 * strides that are congruent nested tuples of plain Python ints with every shape >= 1 and that fit
 * in 64 bits where arithmetic is done. Everything else -- symbolic leaves, numpy ints, bad input
 * and its error messages -- goes to the Python functions that layoutalg.layout registers with
 * `_register`, so there is one definition of what a valid layout is and how an error reads.
 *
 * LayoutBase holds the five fields of a Layout (shape, stride, flat, hash, static) as C members;
 * layoutalg.layout.Layout subclasses it and adds every method.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#define MAX_DEPTH 64 /* layoutalg.layout.MAX_DEPTH: deeper input goes to Python, which refuses it */

typedef struct {
    PyObject_HEAD
    PyObject *shape;
    PyObject *stride;
    PyObject *flat;   /* (flat shape, flat stride), or None: not computed yet */
    PyObject *hash;   /* the cached hash, or None */
    PyObject *statik; /* True / False / None (not known yet): every leaf a plain int */
} LayoutObject;

static PyObject *checked_fn = NULL;         /* layout._checked(shape, stride) -> _Checked */
static PyObject *checked_compact_fn = NULL; /* layout._checked_compact(shape) -> _Checked */
static PyTypeObject *layout_type = NULL;    /* layout.Layout, what make() and coalesce() build */

/* ---- validation ------------------------------------------------------------------------------ */

/* Number of leaves if s:d are congruent tuples of plain ints with shapes >= 1, else -1 (not an
 * error: Python decides). */
static Py_ssize_t
count_static(PyObject *s, PyObject *d, int depth)
{
    if (PyLong_CheckExact(s)) {
        if (!PyLong_CheckExact(d))
            return -1;
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(s, &overflow);
        if (overflow > 0)
            return 1;
        if (overflow < 0 || v < 1)
            return -1;
        return 1;
    }
    if (!PyTuple_CheckExact(s) || !PyTuple_CheckExact(d) || depth >= MAX_DEPTH)
        return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(s);
    if (n != PyTuple_GET_SIZE(d))
        return -1;
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyTuple_GET_ITEM(s, i), *y = PyTuple_GET_ITEM(d, i);
        Py_ssize_t r;
        if (PyLong_CheckExact(x)) { /* the common leaf, inline */
            if (!PyLong_CheckExact(y))
                return -1;
            int overflow;
            long long v = PyLong_AsLongLongAndOverflow(x, &overflow);
            if (overflow < 0 || (overflow == 0 && v < 1))
                return -1;
            r = 1;
        }
        else {
            r = count_static(x, y, depth + 1);
            if (r < 0)
                return -1;
        }
        total += r;
    }
    return total;
}

static void
fill_flat(PyObject *s, PyObject *d, PyObject *fs, PyObject *fd, Py_ssize_t *k)
{
    if (PyTuple_CheckExact(s)) {
        Py_ssize_t n = PyTuple_GET_SIZE(s);
        for (Py_ssize_t i = 0; i < n; i++)
            fill_flat(PyTuple_GET_ITEM(s, i), PyTuple_GET_ITEM(d, i), fs, fd, k);
        return;
    }
    Py_INCREF(s);
    PyTuple_SET_ITEM(fs, *k, s);
    Py_INCREF(d);
    PyTuple_SET_ITEM(fd, *k, d);
    (*k)++;
}

/* (flat shape, flat stride) of a valid static s:d, or NULL with no exception set when s:d is not
 * one (or NULL with an exception on allocation failure). */
static PyObject *
static_flat(PyObject *s, PyObject *d)
{
    Py_ssize_t n = count_static(s, d, 0);
    if (n < 0)
        return NULL;
    if (PyTuple_CheckExact(s) && PyTuple_GET_SIZE(s) == n) {
        int leaves = 1; /* a tuple of ints is its own flattening */
        for (Py_ssize_t i = 0; i < n && leaves; i++)
            leaves = PyLong_CheckExact(PyTuple_GET_ITEM(s, i));
        if (leaves)
            return PyTuple_Pack(2, s, d);
    }
    PyObject *fs = PyTuple_New(n), *fd = PyTuple_New(n);
    if (fs == NULL || fd == NULL) {
        Py_XDECREF(fs);
        Py_XDECREF(fd);
        return NULL;
    }
    Py_ssize_t k = 0;
    fill_flat(s, d, fs, fd, &k);
    PyObject *f = PyTuple_Pack(2, fs, fd);
    Py_DECREF(fs);
    Py_DECREF(fd);
    return f;
}

/* CuTe's compact column-major stride of a valid static shape: prefix products of the leaves, 0 for
 * a leaf of 1 (as layoutalg.inttuple.compact_major). NULL with *fallback set when a product leaves
 * 64 bits (Python does it), NULL with an exception on allocation failure. */
static PyObject *
compact_stride(PyObject *s, long long *p, int *fallback)
{
    if (PyTuple_CheckExact(s)) {
        Py_ssize_t n = PyTuple_GET_SIZE(s);
        PyObject *t = PyTuple_New(n);
        if (t == NULL)
            return NULL;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *x = compact_stride(PyTuple_GET_ITEM(s, i), p, fallback);
            if (x == NULL) {
                Py_DECREF(t);
                return NULL;
            }
            PyTuple_SET_ITEM(t, i, x);
        }
        return t;
    }
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(s, &overflow);
    if (overflow) {
        *fallback = 1;
        return NULL;
    }
    if (v == 1)
        return PyLong_FromLong(0);
    PyObject *d = PyLong_FromLongLong(*p);
    if (d != NULL && __builtin_mul_overflow(*p, v, p)) {
        Py_DECREF(d);
        *fallback = 1;
        return NULL;
    }
    return d;
}

/* ---- LayoutBase ------------------------------------------------------------------------------ */

/* Every field always holds an object (None where unknown): the members are T_OBJECT_EX, the kind
 * of member CPython's attribute caches specialise, as they do Python's __slots__. */
static inline void
set_slot(PyObject **slot, PyObject *v)
{
    if (v == NULL)
        v = Py_None;
    Py_INCREF(v);
    Py_XSETREF(*slot, v);
}

static void
set_fields(LayoutObject *self, PyObject *shape, PyObject *stride, PyObject *flat, PyObject *statik)
{
    set_slot(&self->shape, shape);
    set_slot(&self->stride, stride);
    set_slot(&self->flat, flat);
    set_slot(&self->hash, Py_None);
    set_slot(&self->statik, statik);
}

/* Fill self from a Python _Checked tuple (given shape, given stride, shape, stride, flat, static). */
static int
set_from_checked(LayoutObject *self, PyObject *e)
{
    if (e == NULL)
        return -1;
    if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) != 6) {
        Py_DECREF(e);
        PyErr_SetString(PyExc_SystemError, "layoutalg.speedups._ext: the registered check returned a bad value");
        return -1;
    }
    set_fields(self, PyTuple_GET_ITEM(e, 2), PyTuple_GET_ITEM(e, 3), PyTuple_GET_ITEM(e, 4),
               PyTuple_GET_ITEM(e, 5));
    Py_DECREF(e);
    return 0;
}

static int
Layout_init(LayoutObject *self, PyObject *args, PyObject *kwds)
{
    PyObject *shape, *stride = Py_None;
    if (kwds == NULL && PyTuple_GET_SIZE(args) >= 1 && PyTuple_GET_SIZE(args) <= 2) {
        shape = PyTuple_GET_ITEM(args, 0);
        if (PyTuple_GET_SIZE(args) == 2)
            stride = PyTuple_GET_ITEM(args, 1);
    }
    else {
        static char *kwlist[] = {"shape", "stride", NULL};
        if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:Layout", kwlist, &shape, &stride))
            return -1;
    }
    if (checked_fn == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "layoutalg.speedups._ext: import layoutalg.layout first");
        return -1;
    }
    if (stride == Py_None) {
        if (count_static(shape, shape, 0) >= 0) {
            long long p = 1;
            int fallback = 0;
            PyObject *d = compact_stride(shape, &p, &fallback);
            if (d != NULL) {
                PyObject *flat = static_flat(shape, d);
                if (flat == NULL) {
                    Py_DECREF(d);
                    return -1;
                }
                set_fields(self, shape, d, NULL, Py_True);
                Py_DECREF(d);
                Py_SETREF(self->flat, flat);
                return 0;
            }
            if (!fallback)
                return -1;
        }
        return set_from_checked(self, PyObject_CallOneArg(checked_compact_fn, shape));
    }
    PyObject *flat = static_flat(shape, stride);
    if (flat != NULL) {
        set_fields(self, shape, stride, NULL, Py_True);
        Py_SETREF(self->flat, flat); /* the reference static_flat made */
        return 0;
    }
    if (PyErr_Occurred())
        return -1;
    PyObject *pair[2] = {shape, stride};
    return set_from_checked(self, PyObject_Vectorcall(checked_fn, pair, 2, NULL));
}

static PyObject *
Layout_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    LayoutObject *self = (LayoutObject *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    PyObject **f[5] = {&self->shape, &self->stride, &self->flat, &self->hash, &self->statik};
    for (int i = 0; i < 5; i++) {
        Py_INCREF(Py_None);
        *f[i] = Py_None;
    }
    return (PyObject *)self;
}

static void
Layout_dealloc(LayoutObject *self)
{
    Py_XDECREF(self->shape);
    Py_XDECREF(self->stride);
    Py_XDECREF(self->flat);
    Py_XDECREF(self->hash);
    Py_XDECREF(self->statik);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef Layout_members[] = {
    {"shape", T_OBJECT_EX, offsetof(LayoutObject, shape), READONLY,
     "The shape: an int, a sympy integer expression, or a tuple of shapes."},
    {"stride", T_OBJECT_EX, offsetof(LayoutObject, stride), READONLY, "The stride, congruent with the shape."},
    {"_shape", T_OBJECT_EX, offsetof(LayoutObject, shape), 0, NULL},
    {"_stride", T_OBJECT_EX, offsetof(LayoutObject, stride), 0, NULL},
    {"_flat", T_OBJECT_EX, offsetof(LayoutObject, flat), 0, NULL},
    {"_hash", T_OBJECT_EX, offsetof(LayoutObject, hash), 0, NULL},
    {"_static", T_OBJECT_EX, offsetof(LayoutObject, statik), 0, NULL},
    {NULL},
};

static PyTypeObject LayoutBase_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "layoutalg.speedups._ext.LayoutBase",
    .tp_basicsize = sizeof(LayoutObject),
    .tp_dealloc = (destructor)Layout_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "LayoutBase(shape, stride=None)\n--\n\n"
              "The fields of a Layout, built in C (layoutalg.layout.Layout adds the methods).",
    .tp_members = Layout_members,
    .tp_init = (initproc)Layout_init,
    .tp_new = Layout_new,
};

static LayoutObject *
new_layout(void)
{
    if (layout_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "layoutalg.speedups._ext: import layoutalg.layout first");
        return NULL;
    }
    return (LayoutObject *)Layout_new(layout_type, NULL, NULL);
}

/* make(shape, stride, static=None, flat=None): a Layout from fields already normalised (no check). */
static PyObject *
sp_make(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 2 || nargs > 4) {
        PyErr_SetString(PyExc_TypeError, "_make(shape, stride, static=None, flat=None)");
        return NULL;
    }
    LayoutObject *self = new_layout();
    if (self == NULL)
        return NULL;
    set_fields(self, args[0], args[1], nargs > 3 ? args[3] : NULL, nargs > 2 ? args[2] : NULL);
    return (PyObject *)self;
}

/* ---- kernels on flat int64 modes -------------------------------------------------------------- */

#define KERNEL_MAX 64 /* more flat modes than this: Python */

/* Append the leaves of the static shape:stride x:y to s[], d[] from *k: 0, or -1 past KERNEL_MAX
 * leaves or 64 bits. */
static int
read_leaves(PyObject *x, PyObject *y, long long *s, long long *d, Py_ssize_t *k)
{
    if (PyTuple_CheckExact(x)) {
        Py_ssize_t n = PyTuple_GET_SIZE(x);
        for (Py_ssize_t i = 0; i < n; i++)
            if (read_leaves(PyTuple_GET_ITEM(x, i), PyTuple_GET_ITEM(y, i), s, d, k) < 0)
                return -1;
        return 0;
    }
    int o1, o2;
    if (*k >= KERNEL_MAX)
        return -1;
    s[*k] = PyLong_AsLongLongAndOverflow(x, &o1);
    d[*k] = PyLong_AsLongLongAndOverflow(y, &o2);
    (*k)++;
    return (o1 || o2) ? -1 : 0;
}

/* The flat modes of a static Layout as int64 in s[], d[] (room for KERNEL_MAX): how many, or -1 where
 * the kernels decline (not a Layout, not static, too many modes, a value past 64 bits). */
static Py_ssize_t
read_modes(PyObject *arg, long long *s, long long *d)
{
    if (Py_TYPE(arg) != layout_type)
        return -1;
    LayoutObject *L = (LayoutObject *)arg;
    if (L->statik != Py_True)
        return -1;
    if (!PyTuple_CheckExact(L->flat)) { /* not flattened yet: walk the tuples */
        Py_ssize_t k = 0;
        return read_leaves(L->shape, L->stride, s, d, &k) < 0 ? -1 : k;
    }
    PyObject *fs = PyTuple_GET_ITEM(L->flat, 0), *fd = PyTuple_GET_ITEM(L->flat, 1);
    Py_ssize_t n = PyTuple_GET_SIZE(fs);
    if (n > KERNEL_MAX)
        return -1;
    for (Py_ssize_t k = 0; k < n; k++) {
        int o1, o2;
        s[k] = PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(fs, k), &o1);
        d[k] = PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(fd, k), &o2);
        if (o1 || o2)
            return -1;
    }
    return n;
}

/* Two new tuples of the ints rs[0..r) and rd[0..r) in *shape and *stride: 0, or -1 with an exception
 * set (and both NULL). */
static int
int_tuples(const long long *rs, const long long *rd, int r, PyObject **shape, PyObject **stride)
{
    *shape = PyTuple_New(r);
    *stride = PyTuple_New(r);
    int ok = *shape != NULL && *stride != NULL;
    for (int i = 0; ok && i < r; i++) {
        PyObject *a = PyLong_FromLongLong(rs[i]), *b = PyLong_FromLongLong(rd[i]);
        ok = a != NULL && b != NULL;
        if (!ok) {
            Py_XDECREF(a);
            Py_XDECREF(b);
            break;
        }
        PyTuple_SET_ITEM(*shape, i, a);
        PyTuple_SET_ITEM(*stride, i, b);
    }
    if (ok)
        return 0;
    Py_CLEAR(*shape);
    Py_CLEAR(*stride);
    return -1;
}

/* A new static Layout of r modes rs:rd: ints for one mode (1:0 for none), flat tuples otherwise. */
static PyObject *
layout_of_modes(const long long *rs, const long long *rd, int r)
{
    PyObject *shape, *stride, *flat = NULL;
    if (r <= 1) {
        shape = PyLong_FromLongLong(r ? rs[0] : 1);
        stride = PyLong_FromLongLong(r ? rd[0] : 0);
    }
    else if (int_tuples(rs, rd, r, &shape, &stride) == 0)
        flat = PyTuple_Pack(2, shape, stride);
    LayoutObject *R = NULL;
    if (shape != NULL && stride != NULL && (r <= 1 || flat != NULL))
        R = new_layout();
    if (R == NULL) {
        Py_XDECREF(shape);
        Py_XDECREF(stride);
        Py_XDECREF(flat);
        return NULL;
    }
    Py_SETREF(R->shape, shape);
    Py_SETREF(R->stride, stride);
    if (flat != NULL)
        Py_SETREF(R->flat, flat);
    set_slot(&R->statik, Py_True);
    return (PyObject *)R;
}

/* One step of coalesce: 1 if mode s:d continues the current mode cs:cd (cs*cd == d; cs grows by s,
 * so that a size-1 mode merges as a no-op), 0 if not, -1 past 64 bits. */
static inline int
merges(long long *cs, long long cd, long long s, long long d)
{
    long long span;
    if (__builtin_mul_overflow(*cs, cd, &span))
        return -1;
    if (span != d)
        return 0;
    return __builtin_mul_overflow(*cs, s, cs) ? -1 : 1;
}

/* Coalesce n >= 1 modes s:d into rs:rd (room for n): drop size-1 modes and merge (s0:d0),(s1:d1) when
 * s0*d0 == d1, in one pass -- layoutalg.algebra's kernel. The number of modes, or -1 past 64 bits. */
static int
coalesce_modes(const long long *s, const long long *d, Py_ssize_t n, long long *rs, long long *rd)
{
    int m = 0;
    long long cs = s[0], cd = d[0];
    for (Py_ssize_t k = 1; k < n; k++) {
        int step = merges(&cs, cd, s[k], d[k]);
        if (step < 0)
            return -1;
        if (step == 0 && s[k] != 1) {
            if (cs != 1) {
                rs[m] = cs;
                rd[m] = cd;
                m++;
            }
            cs = s[k];
            cd = d[k];
        }
    }
    if (m > 0 || cs != 1) {
        rs[m] = cs;
        rd[m] = cd;
        m++;
    }
    return m;
}

/* coalesce(L) for a static Layout whose flat modes fit in int64, or None (Python does it). */
static PyObject *
sp_coalesce(PyObject *module, PyObject *arg)
{
    long long s[KERNEL_MAX], d[KERNEL_MAX], rs[KERNEL_MAX], rd[KERNEL_MAX];
    Py_ssize_t n = read_modes(arg, s, d);
    if (n <= 0)
        Py_RETURN_NONE;
    int m = coalesce_modes(s, d, n, rs, rd);
    if (m < 0)
        Py_RETURN_NONE;
    return layout_of_modes(rs, rd, m);
}

/* filter(L): coalesce of L's modes of non-zero stride (1:0 when there are none), or None. */
static PyObject *
sp_filter(PyObject *module, PyObject *arg)
{
    long long s[KERNEL_MAX], d[KERNEL_MAX], rs[KERNEL_MAX], rd[KERNEL_MAX];
    Py_ssize_t n = read_modes(arg, s, d);
    if (n < 0)
        Py_RETURN_NONE;
    Py_ssize_t kept = 0;
    for (Py_ssize_t k = 0; k < n; k++)
        if (d[k] != 0) {
            s[kept] = s[k];
            d[kept] = d[k];
            kept++;
        }
    int m = kept ? coalesce_modes(s, d, kept, rs, rd) : 0;
    if (m < 0)
        Py_RETURN_NONE;
    return layout_of_modes(rs, rd, m);
}

/* right_inverse(L) for a static Layout of non-negative strides and size > 1 whose flat modes fit in
 * int64, or None (Python does it): coalesce, note for each stride its first mode's (extent, product
 * of the extents before it), then follow the strides from 1 -- layoutalg.algebra's kernel, in C. */
static PyObject *
sp_right_inverse(PyObject *module, PyObject *arg)
{
    long long s[KERNEL_MAX], d[KERNEL_MAX];
    long long ws[KERNEL_MAX], wd[KERNEL_MAX], wp[KERNEL_MAX]; /* the first mode of each stride */
    Py_ssize_t n = read_modes(arg, s, d);
    if (n < 0)
        Py_RETURN_NONE;
    Py_ssize_t k = 0;
    while (k < n && s[k] == 1) /* the first mode that is not of extent 1 */
        k++;
    if (k == n) /* size 1 */
        Py_RETURN_NONE;
    int m = 0;
    long long cs = s[k], cd = d[k], p = 1;
    for (k++;; k++) {
        if (k < n) {
            int step = merges(&cs, cd, s[k], d[k]);
            if (step < 0)
                Py_RETURN_NONE;
            if (step > 0 || s[k] == 1)
                continue;
        }
        int seen = 0;
        for (int j = 0; j < m && !seen; j++)
            seen = wd[j] == cd;
        if (!seen) {
            ws[m] = cs;
            wd[m] = cd;
            wp[m] = p;
            m++;
        }
        if (k >= n)
            break;
        if (__builtin_mul_overflow(p, cs, &p))
            Py_RETURN_NONE;
        cs = s[k];
        cd = d[k];
    }
    for (int j = 0; j < m; j++)
        if (wd[j] < 0)
            Py_RETURN_NONE;
    long long rs[KERNEL_MAX], rd[KERNEL_MAX];
    int r = 0;
    long long nxt = 1;
    for (;;) { /* strides strictly increase (coalesced extents are >= 2): no mode is found twice */
        int j = 0;
        while (j < m && wd[j] != nxt)
            j++;
        if (j == m)
            break;
        rs[r] = ws[j];
        rd[r] = wp[j];
        r++;
        if (__builtin_mul_overflow(nxt, ws[j], &nxt))
            Py_RETURN_NONE;
    }
    return layout_of_modes(rs, rd, r);
}

/* ---- composition ----------------------------------------------------------------------------- */

/* CuTe's coalesce_x of n >= 1 modes into S:D: coalesce with a trailing size-1 mode read as 2
 * (layoutalg.algebra.kernels.coalesce_x_fast). The number of modes, or -1 past 64 bits. */
static int
coalesce_x_modes(const long long *s, const long long *d, Py_ssize_t n, long long *S, long long *D)
{
    int m = 0;
    long long cs = 0, cd = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        long long sk = (k == n - 1 && s[k] == 1) ? 2 : s[k], span;
        if (sk == 1)
            continue;
        if (cs) {
            if (__builtin_mul_overflow(cs, cd, &span))
                return -1;
            if (span == d[k]) {
                if (__builtin_mul_overflow(cs, sk, &cs))
                    return -1;
                continue;
            }
            S[m] = cs;
            D[m] = cd;
            m++;
        }
        cs = sk;
        cd = d[k];
    }
    S[m] = cs;
    D[m] = cd;
    return m + 1;
}

static PyObject *
int_pair(long long a, long long b) /* (a, b) as two new ints in a new tuple */
{
    PyObject *x = PyLong_FromLongLong(a), *y = PyLong_FromLongLong(b);
    PyObject *t = (x != NULL && y != NULL) ? PyTuple_Pack(2, x, y) : NULL;
    Py_XDECREF(x);
    Py_XDECREF(y);
    return t;
}

/* The result mode of one leaf s:d of B composed with S:D (R1 = its last index), as a new tuple
 * (shape, stride) -- each an int or a tuple of ints -- or NULL with no exception where the kernel
 * declines (layoutalg.algebra.kernels._compose_leaf_fast returns None there, or past 64 bits). */
static PyObject *
compose_leaf(const long long *S, const long long *D, int R1, long long s, long long d)
{
    long long t;
    if (d == 0)
        return int_pair(s, 0);
    if (R1 == 0)
        return __builtin_mul_overflow(d, D[0], &t) ? NULL : int_pair(s, t);
    if (d < 0)
        return NULL;
    int j = 0; /* divide the stride out of A's modes while it is at least their extent */
    long long cs = S[0];
    while (d >= cs) {
        if (d % cs)
            return NULL;
        d /= cs;
        j++;
        if (j == R1)
            return __builtin_mul_overflow(d, D[R1], &t) ? NULL : int_pair(s, t);
        cs = S[j];
    }
    if (cs % d)
        return NULL;
    if (s == 1)
        return int_pair(1, D[R1]);
    long long n = cs / d;
    if (s <= n)
        return __builtin_mul_overflow(d, D[j], &t) ? NULL : int_pair(s, t);
    if (s % n)
        return NULL;
    long long rs[KERNEL_MAX + 1], rd[KERNEL_MAX + 1];
    int r = 0;
    if (__builtin_mul_overflow(d, D[j], &t))
        return NULL;
    rs[r] = n;
    rd[r++] = t;
    s /= n;
    int done = 0;
    for (int k = j + 1; k < R1 && !done; k++) {
        cs = S[k];
        if (s <= cs) {
            rs[r] = s;
            rd[r++] = D[k];
            done = 1;
            break;
        }
        if (s % cs)
            return NULL;
        rs[r] = cs;
        rd[r++] = D[k];
        s /= cs;
    }
    if (!done) {
        rs[r] = s;
        rd[r++] = D[R1];
    }
    PyObject *shape, *stride;
    if (int_tuples(rs, rd, r, &shape, &stride) < 0)
        return NULL;
    PyObject *pair = PyTuple_Pack(2, shape, stride);
    Py_DECREF(shape);
    Py_DECREF(stride);
    return pair;
}

/* compose_leaf on each leaf of B's tuple bs:bd, keeping B's nesting: a new tuple (shape, stride), or
 * NULL (an exception set, or none where the kernel declines). *prev follows B's leaves as
 * layoutalg.algebra.kernels._compose_walk's ``prev`` does (0 once the strides stop ascending by multiples). */
static PyObject *
compose_walk(const long long *S, const long long *D, int R1, PyObject *bs, PyObject *bd, long long *prev)
{
    Py_ssize_t n = PyTuple_GET_SIZE(bs);
    PyObject *rs = PyTuple_New(n), *rd = PyTuple_New(n);
    if (rs == NULL || rd == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyTuple_GET_ITEM(bs, i), *y = PyTuple_GET_ITEM(bd, i), *q;
        if (PyTuple_CheckExact(x)) {
            q = compose_walk(S, D, R1, x, y, prev);
        }
        else {
            int o1, o2;
            long long s = PyLong_AsLongLongAndOverflow(x, &o1), d = PyLong_AsLongLongAndOverflow(y, &o2), t;
            if (o1 || o2)
                goto fail;
            if (*prev && s != 1 && d) {
                if (d < 0 || d % *prev)
                    *prev = 0;
                else if (__builtin_mul_overflow(s, d, &t))
                    goto fail;
                else
                    *prev = t;
            }
            q = compose_leaf(S, D, R1, s, d);
        }
        if (q == NULL)
            goto fail;
        PyObject *a = PyTuple_GET_ITEM(q, 0), *b = PyTuple_GET_ITEM(q, 1);
        Py_INCREF(a);
        PyTuple_SET_ITEM(rs, i, a);
        Py_INCREF(b);
        PyTuple_SET_ITEM(rd, i, b);
        Py_DECREF(q);
    }
    PyObject *pair = PyTuple_Pack(2, rs, rd);
    Py_DECREF(rs);
    Py_DECREF(rd);
    return pair;
fail:
    Py_XDECREF(rs);
    Py_XDECREF(rd);
    return NULL;
}

/* Every leaf of the int tuple t times k, or NULL (no exception where past 64 bits). */
static PyObject *
scale(PyObject *t, long long k)
{
    if (!PyTuple_CheckExact(t)) {
        int o;
        long long v = PyLong_AsLongLongAndOverflow(t, &o), r;
        if (o || __builtin_mul_overflow(v, k, &r))
            return NULL;
        return PyLong_FromLongLong(r);
    }
    Py_ssize_t n = PyTuple_GET_SIZE(t);
    PyObject *out = PyTuple_New(n);
    for (Py_ssize_t i = 0; out != NULL && i < n; i++) {
        PyObject *x = scale(PyTuple_GET_ITEM(t, i), k);
        if (x == NULL) {
            Py_CLEAR(out);
            break;
        }
        PyTuple_SET_ITEM(out, i, x);
    }
    return out;
}

/* composition(A, B) of two static Layouts, as layoutalg.algebra.kernels.compose_fast builds it, or None
 * wherever that kernel returns None, the result would need the functional check (B's leaves do
 * not chain), or a value leaves 64 bits: then Python runs. */
static PyObject *
sp_compose(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    long long s[KERNEL_MAX], d[KERNEL_MAX], S[KERNEL_MAX], D[KERNEL_MAX];
    if (nargs != 2 || Py_TYPE(args[1]) != layout_type)
        Py_RETURN_NONE;
    Py_ssize_t n = read_modes(args[0], s, d);
    LayoutObject *B = (LayoutObject *)args[1];
    if (n <= 0 || B->statik != Py_True)
        Py_RETURN_NONE;
    int R = coalesce_x_modes(s, d, n, S, D);
    if (R < 0)
        Py_RETURN_NONE;
    int R1 = R - 1;
    PyObject *shape = NULL, *stride = NULL;
    if (R1 == 0) { /* A is one mode s:d: every stride of B times d */
        shape = B->shape;
        Py_INCREF(shape);
        if (D[0] == 1) {
            stride = B->stride;
            Py_INCREF(stride);
        }
        else
            stride = scale(B->stride, D[0]);
    }
    else {
        PyObject *q;
        if (!PyTuple_CheckExact(B->shape)) {
            int o1, o2;
            long long bs = PyLong_AsLongLongAndOverflow(B->shape, &o1), bd = PyLong_AsLongLongAndOverflow(B->stride, &o2);
            q = (o1 || o2) ? NULL : compose_leaf(S, D, R1, bs, bd);
        }
        else {
            long long prev = 1;
            q = compose_walk(S, D, R1, B->shape, B->stride, &prev);
            if (q != NULL && prev == 0) { /* not chained: Python decides whether to check the function */
                Py_DECREF(q);
                q = NULL;
            }
        }
        if (q != NULL) {
            shape = PyTuple_GET_ITEM(q, 0);
            stride = PyTuple_GET_ITEM(q, 1);
            Py_INCREF(shape);
            Py_INCREF(stride);
            Py_DECREF(q);
        }
    }
    if (shape == NULL || stride == NULL) {
        Py_XDECREF(shape);
        Py_XDECREF(stride);
        if (PyErr_Occurred())
            return NULL;
        Py_RETURN_NONE;
    }
    LayoutObject *Rl = new_layout();
    if (Rl == NULL) {
        Py_DECREF(shape);
        Py_DECREF(stride);
        return NULL;
    }
    Py_SETREF(Rl->shape, shape);
    Py_SETREF(Rl->stride, stride);
    set_slot(&Rl->statik, Py_True);
    return (PyObject *)Rl;
}

/* ---- complement ------------------------------------------------------------------------------ */

/* complement(L, M) for a static Layout whose flat modes fit in int64 and an int cotarget M >= 1, or
 * None (Python does it: a negative stride, an inexact gap, a value past 64 bits) --
 * layoutalg.algebra.kernels.complement_fast, in C: filter and coalesce L, sort its modes by stride (the first
 * on ties), emit the gap below each stride and the rest up to M, coalescing as they are emitted. */
static PyObject *
sp_complement(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    long long s[KERNEL_MAX], d[KERNEL_MAX], ms[KERNEL_MAX], md[KERNEL_MAX], rs[KERNEL_MAX + 1], rd[KERNEL_MAX + 1];
    if (nargs != 2 || !PyLong_CheckExact(args[1]))
        Py_RETURN_NONE;
    Py_ssize_t n = read_modes(args[0], s, d);
    int o;
    long long M = PyLong_AsLongLongAndOverflow(args[1], &o);
    if (n < 0 || o || M < 1)
        Py_RETURN_NONE;
    Py_ssize_t k = 0;
    while (k < n && (s[k] == 1 || d[k] == 0)) /* the first mode that is not trivial */
        k++;
    if (k == n) { /* only stride-0 modes: the whole cotarget */
        long long t = M, u = M == 1 ? 0 : 1;
        return layout_of_modes(&t, &u, 1);
    }
    long long cs = s[k], cd = d[k];
    if (cd < 0)
        Py_RETURN_NONE;
    int m = 0;
    for (k++; k < n; k++) {
        int step = merges(&cs, cd, s[k], d[k]);
        if (step < 0)
            Py_RETURN_NONE;
        if (step > 0 || s[k] == 1 || d[k] == 0)
            continue;
        if (d[k] < 0)
            Py_RETURN_NONE;
        ms[m] = cs;
        md[m] = cd;
        m++;
        cs = s[k];
        cd = d[k];
    }
    long long last, rest;
    if (m == 0) { /* one mode cs:cd: the gap cd:1 below it, then the rest up to M at stride cs*cd */
        if (__builtin_mul_overflow(cd, cs, &last))
            Py_RETURN_NONE;
        rest = M / last + (M % last != 0);
        rs[0] = cd;
        rd[0] = 1;
        rs[1] = rest;
        rd[1] = last;
        if (cd == 1)
            return layout_of_modes(rs + 1, rd + 1, rest == 1 ? 0 : 1);
        return layout_of_modes(rs, rd, rest == 1 ? 1 : 2);
    }
    ms[m] = cs;
    md[m] = cd;
    m++;
    for (int i = 1; i < m; i++) { /* a stable insertion sort by stride */
        long long a = ms[i], b = md[i];
        int j = i - 1;
        while (j >= 0 && md[j] > b) {
            ms[j + 1] = ms[j];
            md[j + 1] = md[j];
            j--;
        }
        ms[j + 1] = a;
        md[j + 1] = b;
    }
    int r = 0;
    long long ps = 0, pd = 0, span;
    last = 1;
    for (int i = 0; i < m; i++) {
        long long gap = md[i] / last;
        if (gap == 0 || md[i] % last)
            Py_RETURN_NONE;
        if (gap != 1) {
            if (ps && !__builtin_mul_overflow(ps, pd, &span) && span == last)
                ps *= gap; /* ps * gap * pd == md[i]: no overflow */
            else {
                if (ps) {
                    rs[r] = ps;
                    rd[r++] = pd;
                }
                ps = gap;
                pd = last;
            }
        }
        if (__builtin_mul_overflow(md[i], ms[i], &last))
            Py_RETURN_NONE;
    }
    rest = M / last + (M % last != 0);
    if (rest != 1) {
        if (ps && !__builtin_mul_overflow(ps, pd, &span) && span == last) {
            if (__builtin_mul_overflow(ps, rest, &ps))
                Py_RETURN_NONE;
        }
        else {
            if (ps) {
                rs[r] = ps;
                rd[r++] = pd;
            }
            ps = rest;
            pd = last;
        }
    }
    if (ps) {
        rs[r] = ps;
        rd[r++] = pd;
    }
    return layout_of_modes(rs, rd, r);
}

/* ---- size, cosize, evaluation ---------------------------------------------------------------- */

/* size(L) (the product of the extents), or None past 64 bits or for a layout that is not static. */
static PyObject *
sp_size(PyObject *module, PyObject *arg)
{
    long long s[KERNEL_MAX], d[KERNEL_MAX], p = 1;
    Py_ssize_t n = read_modes(arg, s, d);
    if (n < 0)
        Py_RETURN_NONE;
    for (Py_ssize_t k = 0; k < n; k++)
        if (__builtin_mul_overflow(p, s[k], &p))
            Py_RETURN_NONE;
    return PyLong_FromLongLong(p);
}

/* cosize(L): one past the sum of (extent - 1) * stride over the positive strides (as Layout.cosize),
 * or None. */
static PyObject *
sp_cosize(PyObject *module, PyObject *arg)
{
    long long s[KERNEL_MAX], d[KERNEL_MAX], hi = 0, t;
    Py_ssize_t n = read_modes(arg, s, d);
    if (n < 0)
        Py_RETURN_NONE;
    for (Py_ssize_t k = 0; k < n; k++)
        if (d[k] > 0 && (__builtin_mul_overflow(s[k] - 1, d[k], &t) || __builtin_add_overflow(hi, t, &hi)))
            Py_RETURN_NONE;
    if (__builtin_add_overflow(hi, 1, &hi))
        Py_RETURN_NONE;
    return PyLong_FromLongLong(hi);
}

/* L(i) for a plain int index i >= 0 (the last mode absorbs the overflow), or None. */
static PyObject *
sp_eval_index(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    long long s[KERNEL_MAX], d[KERNEL_MAX];
    if (nargs != 2 || !PyLong_CheckExact(args[1]))
        Py_RETURN_NONE;
    int overflow;
    long long c = PyLong_AsLongLongAndOverflow(args[1], &overflow);
    if (overflow || c < 0)
        Py_RETURN_NONE;
    Py_ssize_t n = read_modes(args[0], s, d);
    if (n < 0)
        Py_RETURN_NONE;
    long long r = 0, t;
    for (Py_ssize_t k = 0; k + 1 < n; k++) {
        if (__builtin_mul_overflow(c % s[k], d[k], &t) || __builtin_add_overflow(r, t, &r))
            Py_RETURN_NONE;
        c /= s[k];
    }
    if (n > 0 && (__builtin_mul_overflow(c, d[n - 1], &t) || __builtin_add_overflow(r, t, &r)))
        Py_RETURN_NONE;
    return PyLong_FromLongLong(r);
}

/* ---- module ---------------------------------------------------------------------------------- */

static PyObject *
sp_static_flat(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "static_flat(shape, stride)");
        return NULL;
    }
    PyObject *f = static_flat(args[0], args[1]);
    if (f == NULL && !PyErr_Occurred())
        Py_RETURN_NONE;
    return f;
}

static PyObject *
sp_register(PyObject *module, PyObject *args)
{
    PyObject *cls, *checked, *compact;
    if (!PyArg_ParseTuple(args, "O!OO:_register", &PyType_Type, &cls, &checked, &compact))
        return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)cls, &LayoutBase_Type)) {
        PyErr_SetString(PyExc_TypeError, "_register: the class must subclass LayoutBase");
        return NULL;
    }
    Py_INCREF(cls);
    Py_XSETREF(layout_type, (PyTypeObject *)cls);
    Py_INCREF(checked);
    Py_XSETREF(checked_fn, checked);
    Py_INCREF(compact);
    Py_XSETREF(checked_compact_fn, compact);
    Py_RETURN_NONE;
}

static PyMethodDef sp_methods[] = {
    {"_register", sp_register, METH_VARARGS,
     "_register(Layout, checked, checked_compact): the class to build and the Python checks to defer to."},
    {"make", (PyCFunction)(void (*)(void))sp_make, METH_FASTCALL,
     "make(shape, stride, static=None, flat=None): a Layout from normalised fields, unchecked."},
    {"static_flat", (PyCFunction)(void (*)(void))sp_static_flat, METH_FASTCALL,
     "static_flat(shape, stride): (flat shape, flat stride) of congruent plain-int tuples with shapes >= 1, else None."},
    {"right_inverse", sp_right_inverse, METH_O,
     "right_inverse(L): right inverse of a static Layout of non-negative strides in 64-bit arithmetic, or None."},
    {"compose", (PyCFunction)(void (*)(void))sp_compose, METH_FASTCALL,
     "compose(A, B): composition of static Layouts where the kernel is exact and chained, in 64-bit arithmetic, or None."},
    {"size", sp_size, METH_O, "size(L): size of a static Layout in 64-bit arithmetic, or None."},
    {"cosize", sp_cosize, METH_O, "cosize(L): cosize of a static Layout in 64-bit arithmetic, or None."},
    {"eval_index", (PyCFunction)(void (*)(void))sp_eval_index, METH_FASTCALL,
     "eval_index(L, i): L(i) for a static Layout and an int i >= 0 in 64-bit arithmetic, or None."},
    {"filter", sp_filter, METH_O, "filter(L): filter of a static Layout in 64-bit arithmetic, or None."},
    {"coalesce", sp_coalesce, METH_O, "coalesce(L): coalesce of a static Layout in 64-bit arithmetic, or None."},
    {"complement", (PyCFunction)(void (*)(void))sp_complement, METH_FASTCALL,
     "complement(L, M): complement of a static Layout in an int cotarget, in 64-bit arithmetic, or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef sp_module = {
    PyModuleDef_HEAD_INIT, "layoutalg.speedups._ext",
    "C fast paths of Layout construction and coalesce (optional; pure Python without it).", -1, sp_methods,
};

PyMODINIT_FUNC
PyInit__ext(void)
{
    if (PyType_Ready(&LayoutBase_Type) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&sp_module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&LayoutBase_Type);
    if (PyModule_AddObject(m, "LayoutBase", (PyObject *)&LayoutBase_Type) < 0) {
        Py_DECREF(&LayoutBase_Type);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
