/* col_real.c - finding the real function behind an interposed symbol.
 *
 * dlsym(RTLD_NEXT) finds the next definition in the global scope, which is
 * where a program linked against libcudart or libnccl has them. A library
 * loaded with RTLD_LOCAL (Python extension modules pull libcudart in that
 * way) is not in the global scope, yet its callers still bind to our
 * preloaded definition first: then the loaded object whose file name starts
 * with the hint ("libcudart", "libcuda.", "libnccl") is searched by handle.
 * Our own object is never returned (that would recurse).
 */
#include "col.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>

typedef struct find_ctx {
    const char *name, *hint;
    const char *self_path;
    void *found;
} find_ctx;

static int visit(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    find_ctx *c = arg;
    const char *path = info->dlpi_name;
    if (!path || !*path || (c->self_path && strcmp(path, c->self_path) == 0))
        return 0;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strncmp(base, c->hint, strlen(c->hint)) != 0)
        return 0;
    void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return 0;
    void *f = dlsym(h, c->name);
    dlclose(h); /* NOLOAD took a reference; the object stays loaded */
    if (f) {
        c->found = f;
        return 1;
    }
    return 0;
}

void *col_real(const char *name, const char *lib_hint)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (f || !lib_hint)
        return f;
    Dl_info self;
    find_ctx c = { name, lib_hint, NULL, NULL };
    if (dladdr((void *)&col_real, &self))
        c.self_path = self.dli_fname;
    dl_iterate_phdr(visit, &c);
    return c.found;
}
