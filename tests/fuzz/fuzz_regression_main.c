/*
 * Replays fuzz inputs through the fuzz target without libFuzzer, so that the normal build (and the
 * ASan build) runs the seed corpus and every input that once crashed (corpus/regression) as a
 * plain test. Arguments are files or directories; the run fails if none holds an input, and a
 * contract violation aborts with the harness's message after naming the input.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
void fuzz_api_teardown(void);
void fuzz_api_counts(long* calls, long* completed_runs);

static long g_inputs;

static int run_file(const char* path) {
    FILE* f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    uint8_t* data = NULL;
    size_t size = 0, capacity = 0;
    for (;;) {
        if (size == capacity) {
            capacity = capacity ? capacity * 2 : 4096;
            uint8_t* grown = (uint8_t*)realloc(data, capacity);
            if (grown == NULL) {
                free(data);
                fclose(f);
                return 1;
            }
            data = grown;
        }
        const size_t got = fread(data + size, 1, capacity - size, f);
        if (got == 0) break;
        size += got;
    }
    fclose(f);
    fprintf(stderr, "input %s (%zu bytes)\n", path, size);
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    g_inputs++;
    return 0;
}

static int compare_names(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

static int run_path(const char* path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "no such file or directory: %s\n", path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode)) return run_file(path);
    DIR* dir = opendir(path);
    if (dir == NULL) return 1;
    char** names = NULL;
    size_t count = 0;
    int failures = 0;
    for (struct dirent* entry; (entry = readdir(dir)) != NULL;) {
        if (entry->d_name[0] == '.') continue; /* ., .., hidden files (.gitkeep) */
        char** grown = (char**)realloc(names, (count + 1) * sizeof *names);
        if (grown == NULL) break;
        names = grown;
        const size_t length = strlen(path) + strlen(entry->d_name) + 2;
        names[count] = (char*)malloc(length);
        if (names[count] == NULL) break;
        snprintf(names[count], length, "%s/%s", path, entry->d_name);
        count++;
    }
    closedir(dir);
    qsort(names, count, sizeof *names, compare_names); /* a stable order for reproducible logs */
    for (size_t i = 0; i < count; ++i) {
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) failures += run_file(names[i]);
        free(names[i]);
    }
    free(names);
    return failures;
}

int main(int argc, char** argv) {
    int failures = 0;
    for (int i = 1; i < argc; ++i) failures += run_path(argv[i]);
    fuzz_api_teardown();
    if (g_inputs == 0) {
        fprintf(stderr, "no fuzz inputs found\n");
        return 1;
    }
    long calls = 0, runs = 0;
    fuzz_api_counts(&calls, &runs);
    printf("%ld fuzz inputs replayed (%ld zyfa calls, %ld non-empty runs completed), %d unreadable\n", g_inputs,
           calls, runs, failures);
    return failures == 0 ? 0 : 1;
}
