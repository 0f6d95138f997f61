/* probe_team.c - pinned worker threads that run phases in lockstep.
 *
 * Bandwidth probes need every thread to start a phase together and the
 * phase to end when the slowest finishes, so the team synchronises with a
 * barrier on both sides and each worker reads the clock around its share;
 * the phase lasts from the first start to the last end.
 * Threads are pinned so that first-touch places each thread's chunk of the
 * arrays on its own NUMA node: with hwloc, cores are taken round-robin over
 * NUMA nodes (thread 0 on node 0, thread 1 on node 1, ...); without it, by
 * CPU number through sched_setaffinity.
 */
#include "probe_mem.h"
#include "../base/log.h"
#include "../base/util.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef CP_HAVE_HWLOC
#include <hwloc.h>
#endif

struct probe_team {
    int n;
    probe_team_fn fn;
    void *arg;
    pthread_t *threads;
    int *started;
    pthread_barrier_t start, end;
    int phase; /* written by the main thread before the start barrier */
    bool stop;
    int64_t *t_start, *t_end; /* each worker's clock around its share of a phase */
    char placement[160];
#ifdef CP_HAVE_HWLOC
    hwloc_topology_t topo;
    hwloc_cpuset_t *sets; /* one per thread, NULL entries = unbound */
#endif
};

typedef struct worker {
    probe_team *t;
    int tid;
} worker;

static void bind_self(probe_team *t, int tid)
{
#ifdef CP_HAVE_HWLOC
    if (t->sets && t->sets[tid]) {
        hwloc_set_cpubind(t->topo, t->sets[tid], HWLOC_CPUBIND_THREAD);
        return;
    }
#endif
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(tid % cp_cpu_count(), &set);
    sched_setaffinity(0, sizeof set, &set); /* best effort: a refused bind only costs locality */
}

static void *worker_main(void *p)
{
    worker *w = p;
    probe_team *t = w->t;
    bind_self(t, w->tid);
    for (;;) {
        pthread_barrier_wait(&t->start);
        if (t->stop)
            break;
        t->t_start[w->tid] = cp_now_ns();
        t->fn(t->arg, w->tid, t->n, t->phase);
        t->t_end[w->tid] = cp_now_ns();
        pthread_barrier_wait(&t->end);
    }
    free(w);
    return NULL;
}

#ifdef CP_HAVE_HWLOC
/* Cores round-robin over NUMA nodes; returns the number of NUMA nodes used. */
static int plan_binding(probe_team *t)
{
    if (hwloc_topology_init(&t->topo) < 0)
        return 0;
    if (hwloc_topology_load(t->topo) < 0) {
        hwloc_topology_destroy(t->topo);
        t->topo = NULL;
        return 0;
    }
    int n_numa = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_NUMANODE);
    int n_cores = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_CORE);
    if (n_numa < 1)
        n_numa = 1;
    if (n_cores < 1)
        return 0;
    t->sets = cp_xcalloc((size_t)t->n, sizeof *t->sets);
    for (int i = 0; i < t->n; i++) {
        /* thread i: node i % n_numa, that node's (i / n_numa)-th core */
        hwloc_obj_t node = hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_NUMANODE, (unsigned)(i % n_numa));
        int want = i / n_numa, in_node = 0;
        hwloc_obj_t core = NULL, first = NULL;
        for (int c = 0; c < n_cores; c++) {
            hwloc_obj_t cand = hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_CORE, (unsigned)c);
            if (node && !hwloc_bitmap_intersects(cand->cpuset, node->cpuset))
                continue;
            if (!first)
                first = cand;
            if (in_node++ == want) {
                core = cand;
                break;
            }
        }
        if (!core) /* more threads than cores: wrap around */
            core = first ? hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_CORE, (unsigned)(i % n_cores)) : NULL;
        if (!core)
            continue;
        t->sets[i] = hwloc_bitmap_dup(core->cpuset);
        hwloc_bitmap_singlify(t->sets[i]); /* one PU: no migration between SMT siblings */
    }
    return n_numa;
}
#endif

probe_team *probe_team_new(int nthreads, probe_team_fn fn, void *arg)
{
    probe_team *t = cp_xcalloc(1, sizeof *t);
    t->n = nthreads > 0 ? nthreads : 1;
    t->fn = fn;
    t->arg = arg;
    int n_numa = 0;
#ifdef CP_HAVE_HWLOC
    n_numa = plan_binding(t);
#endif
    if (n_numa > 0)
        snprintf(t->placement, sizeof t->placement, "hwloc: %d threads pinned round-robin over %d NUMA node%s", t->n,
                 n_numa, n_numa == 1 ? "" : "s");
    else
        snprintf(t->placement, sizeof t->placement, "%d threads pinned by CPU number", t->n);
    pthread_barrier_init(&t->start, NULL, (unsigned)t->n + 1);
    pthread_barrier_init(&t->end, NULL, (unsigned)t->n + 1);
    t->threads = cp_xcalloc((size_t)t->n, sizeof *t->threads);
    t->t_start = cp_xcalloc((size_t)t->n, sizeof *t->t_start);
    t->t_end = cp_xcalloc((size_t)t->n, sizeof *t->t_end);
    for (int i = 0; i < t->n; i++) {
        worker *w = cp_xmalloc(sizeof *w);
        *w = (worker){ t, i };
        if (pthread_create(&t->threads[i], NULL, worker_main, w) != 0) {
            /* the barriers count on every thread: nothing sensible to fall back to */
            cp_log_error("cannot start probe thread %d of %d", i + 1, t->n);
            abort();
        }
    }
    return t;
}

/* The phase's time is the workers' own: from the first one starting its
 * share to the last one finishing. The main thread's clock would not do:
 * with as many workers as CPUs it is often descheduled between the start
 * barrier and reading the clock, and a phase that ran meanwhile then
 * looked microseconds long (STREAM figures of 10 TB/s on a loaded VM). */
double probe_team_run(probe_team *t, int phase)
{
    t->phase = phase;
    pthread_barrier_wait(&t->start);
    pthread_barrier_wait(&t->end);
    int64_t t0 = t->t_start[0], t1 = t->t_end[0];
    for (int i = 1; i < t->n; i++) {
        if (t->t_start[i] < t0)
            t0 = t->t_start[i];
        if (t->t_end[i] > t1)
            t1 = t->t_end[i];
    }
    return (double)(t1 - t0) / 1e9;
}

int probe_team_size(const probe_team *t)
{
    return t->n;
}

const char *probe_team_placement(const probe_team *t)
{
    return t->placement;
}

void probe_team_free(probe_team *t)
{
    if (!t)
        return;
    t->stop = true;
    pthread_barrier_wait(&t->start);
    for (int i = 0; i < t->n; i++)
        pthread_join(t->threads[i], NULL);
    pthread_barrier_destroy(&t->start);
    pthread_barrier_destroy(&t->end);
#ifdef CP_HAVE_HWLOC
    if (t->sets)
        for (int i = 0; i < t->n; i++)
            if (t->sets[i])
                hwloc_bitmap_free(t->sets[i]);
    free(t->sets);
    if (t->topo)
        hwloc_topology_destroy(t->topo);
#endif
    free(t->threads);
    free(t->t_start);
    free(t->t_end);
    free(t);
}
