/* SPDX-License-Identifier: BSD-3-Clause */
/* main() for a fuzz harness in builds without libFuzzer: runs LLVMFuzzerTestOneInput once on
 * every file named on the command line, or in a directory named there (the seed corpus and the
 * regressions, so every crash ever found stays a test). Names starting with '.' are skipped. */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f || fstat(fileno(f), &st)) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        if (f)
            fclose(f);
        return -1;
    }
    /* Exactly the file's size, as libFuzzer does, so ASan catches a read one byte past it. */
    size_t len = (size_t)st.st_size;
    uint8_t *buf = malloc(len ? len : 1);
    int bad = !buf || fread(buf, 1, len, f) != len;
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: %s: read failed\n", path);
        free(buf);
        return -1;
    }
    fprintf(stderr, "replay: %s\n", path);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files of dir in name order, so runs are reproducible. */
static int run_dir(const char *dir, int *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            char **more = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
            if (!more) {
                rc = -1;
                break;
            }
            names = more;
        }
        if (!(names[n] = strdup(e->d_name))) {
            rc = -1;
            break;
        }
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_names);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(dir) + strlen(names[i]) + 2;
        char *path = malloc(len);
        if (path) {
            snprintf(path, len, "%s/%s", dir, names[i]);
            struct stat st;
            if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                if (run_file(path))
                    rc = -1;
                (*count)++;
            }
        } else {
            rc = -1;
        }
        free(path);
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    int count = 0, rc = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st)) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            rc = 1;
        } else if (S_ISDIR(st.st_mode)) {
            rc |= run_dir(argv[i], &count) ? 1 : 0;
        } else {
            rc |= run_file(argv[i]) ? 1 : 0;
            count++;
        }
    }
    printf("replay: %d inputs, %s\n", count, rc ? "errors" : "all passed");
    return rc;
}
