/* replay.c - run a fuzz target over its seed corpus without libFuzzer.
 *
 * Lets ctest exercise every fuzz target in the gcc build and in the
 * ASan+UBSan build, on every seed (and on any crash reproducer added to the
 * corpus). Each file is fed whole, then every prefix at a few cut points,
 * because truncation is the commonest real damage. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    size_t got = fread(buf, 1, (size_t)(n > 0 ? n : 0), f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, got);
    size_t cuts[] = { got / 2, got / 3, got * 2 / 3, got > 1 ? got - 1 : 0 };
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        uint8_t *pre = malloc(cuts[i] ? cuts[i] : 1);
        memcpy(pre, buf, cuts[i]);
        LLVMFuzzerTestOneInput(pre, cuts[i]);
        free(pre);
    }
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int files = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: no corpus at %s\n", argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            files += run_file(argv[i]) == 0;
            continue;
        }
        DIR *d = opendir(argv[i]);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
            files += run_file(p) == 0;
        }
        if (d)
            closedir(d);
    }
    printf("replayed %d inputs\n", files);
    return files > 0 ? 0 : 1;
}
