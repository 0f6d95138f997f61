/* par.c - see par.h. */
#include "par.h"
#include "util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef struct par_state {
    atomic_size_t next;
    size_t n;
    cp_par_fn fn;
    void *ctx;
} par_state;

static void *worker(void *arg)
{
    par_state *st = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&st->next, 1);
        if (i >= st->n)
            break;
        st->fn(st->ctx, i);
    }
    return NULL;
}

void cp_par_for(size_t n, int nthreads, cp_par_fn fn, void *ctx)
{
    par_state st;
    atomic_init(&st.next, 0);
    st.n = n;
    st.fn = fn;
    st.ctx = ctx;
    if (nthreads > (int)n)
        nthreads = (int)n;
    if (nthreads <= 1) {
        worker(&st);
        return;
    }
    pthread_t *th = cp_xcalloc((size_t)nthreads - 1, sizeof *th);
    int started = 0;
    for (int t = 0; t < nthreads - 1; t++)
        if (pthread_create(&th[t], NULL, worker, &st) == 0)
            started++;
        else
            break;
    worker(&st);
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    free(th);
}
