/* 2000 functions lazy_f1000 .. lazy_f2999, written by the preprocessor:
 * LAZY_EACH(X) expands X(n) for each n. */
#ifndef LAZYBIND_FUNCS_H
#define LAZYBIND_FUNCS_H
#define LAZY_10(X, p) X(p##0) X(p##1) X(p##2) X(p##3) X(p##4) X(p##5) X(p##6) X(p##7) X(p##8) X(p##9)
#define LAZY_100(X, p)                                                                                   \
    LAZY_10(X, p##0) LAZY_10(X, p##1) LAZY_10(X, p##2) LAZY_10(X, p##3) LAZY_10(X, p##4)                 \
    LAZY_10(X, p##5) LAZY_10(X, p##6) LAZY_10(X, p##7) LAZY_10(X, p##8) LAZY_10(X, p##9)
#define LAZY_1000(X, p)                                                                                  \
    LAZY_100(X, p##0) LAZY_100(X, p##1) LAZY_100(X, p##2) LAZY_100(X, p##3) LAZY_100(X, p##4)            \
    LAZY_100(X, p##5) LAZY_100(X, p##6) LAZY_100(X, p##7) LAZY_100(X, p##8) LAZY_100(X, p##9)
#define LAZY_EACH(X) LAZY_1000(X, 1) LAZY_1000(X, 2)
#endif
