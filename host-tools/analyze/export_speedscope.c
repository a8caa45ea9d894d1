/* export_speedscope: speedscope's file format (www.speedscope.app/file-format-schema.json), one
 * "sampled" profile: every distinct folded stack is one sample (frame indexes, root first)
 * whose weight is its count, frames shared through "shared.frames"; see export.h. */
#include "export.h"
#include "util.h"
#include "view.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
    char **names;  /* frame index -> name */
    size_t n, cap;
    size_t *slot;  /* open addressing: frame index + 1, 0 = empty */
    size_t scap;   /* power of two */
} ss_frames;

static uint64_t hash_str(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h;
}

static int grow_slots(ss_frames *t)
{
    size_t ncap = t->scap ? 2 * t->scap : 1024;
    size_t *ns = calloc(ncap, sizeof *ns);
    if (!ns) return -1;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = hash_str(t->names[i], strlen(t->names[i])) & (ncap - 1);
        while (ns[j]) j = (j + 1) & (ncap - 1);
        ns[j] = i + 1;
    }
    free(t->slot);
    t->slot = ns;
    t->scap = ncap;
    return 0;
}

/* The index of frame name[0..len), added if new; -1 when out of memory. */
static long frame_index(ss_frames *t, const char *name, size_t len)
{
    if ((t->n + 1) * 2 > t->scap && grow_slots(t) != 0) return -1;
    size_t j = hash_str(name, len) & (t->scap - 1);
    for (; t->slot[j]; j = (j + 1) & (t->scap - 1)) {
        const char *s = t->names[t->slot[j] - 1];
        if (strlen(s) == len && memcmp(s, name, len) == 0) return (long)(t->slot[j] - 1);
    }
    if (t->n == t->cap) {
        size_t ncap = t->cap ? 2 * t->cap : 256;
        char **nn = realloc(t->names, ncap * sizeof *nn);
        if (!nn) return -1;
        t->names = nn;
        t->cap = ncap;
    }
    char *copy = strndup(name, len);
    if (!copy) return -1;
    t->names[t->n] = copy;
    t->slot[j] = ++t->n;
    return (long)(t->n - 1);
}

typedef struct {
    ss_frames frames;
    FILE *tmp;      /* the samples, written while frames are numbered */
    int first;
    uint64_t *weights;
    size_t nw, wcap;
} ss_state;

static int add_sample(void *ctx, const char *folded, uint64_t count)
{
    ss_state *s = ctx;
    fprintf(s->tmp, "%s[", s->first ? "" : ",");
    s->first = 0;
    for (const char *p = folded;;) {
        const char *e = strchr(p, ';');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        long id = frame_index(&s->frames, p, len);
        if (id < 0) return -1;
        fprintf(s->tmp, "%s%ld", p == folded ? "" : ",", id);
        if (!e) break;
        p = e + 1;
    }
    fputc(']', s->tmp);
    if (s->nw == s->wcap) {
        size_t ncap = s->wcap ? 2 * s->wcap : 256;
        uint64_t *nw = realloc(s->weights, ncap * sizeof *nw);
        if (!nw) return -1;
        s->weights = nw;
        s->wcap = ncap;
    }
    s->weights[s->nw++] = count;
    return 0;
}

int export_speedscope_write(const flame *f, FILE *out, const char *name, const char *unit)
{
    ss_state s = {.first = 1};
    s.tmp = tmpfile();
    int rc = s.tmp && flame_each(f, add_sample, &s) == 0 ? 0 : -1;
    if (rc == 0) {
        fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":\"hvtrace\",\"name\":", out);
        export_json_str(out, name);
        fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", out);
        for (size_t i = 0; i < s.frames.n; i++) {
            fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
            export_json_str(out, s.frames.names[i]);
            fputc('}', out);
        }
        fputs("]},\"profiles\":[{\"type\":\"sampled\",\"name\":", out);
        export_json_str(out, name);
        fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%llu,\"samples\":[", unit,
                (unsigned long long)flame_total(f));
        rewind(s.tmp);
        char buf[65536];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, s.tmp)) > 0) fwrite(buf, 1, n, out);
        fputs("],\"weights\":[", out);
        for (size_t i = 0; i < s.nw; i++) fprintf(out, "%s%llu", i ? "," : "", (unsigned long long)s.weights[i]);
        fputs("]}]}\n", out);
        if (ferror(out) || ferror(s.tmp)) rc = -1;
    }
    if (s.tmp) fclose(s.tmp);
    for (size_t i = 0; i < s.frames.n; i++) free(s.frames.names[i]);
    free(s.frames.names);
    free(s.frames.slot);
    free(s.weights);
    return rc;
}

int export_speedscope_trace(const char *trace_path, const export_opts *o)
{
    /* the folded view's lines, read back through flame's checked reader */
    FILE *tmp = tmpfile();
    flame *f = flame_new();
    if (!tmp || !f) {
        if (tmp) fclose(tmp);
        flame_free(f);
        fprintf(stderr, "hvt: out of memory or no temporary file\n");
        return 1;
    }
    view_opts vo = {o->syms, o->slide, VIEW_FOLDED, 0, o->from, o->to, o->hide, tmp, NULL};
    int rc = view_run(trace_path, &vo);
    char err[256];
    rewind(tmp);
    if (flame_read_folded(f, tmp, "folded stacks", err, sizeof err) != 0) {
        fprintf(stderr, "hvt: %s\n", err);
        rc = 1;
    }
    fclose(tmp);
    int to_stdout = !strcmp(o->out, "-");
    FILE *out = to_stdout ? stdout : fopen(o->out, "w");
    if (!out) {
        perror(o->out);
        flame_free(f);
        return 1;
    }
    const char *base = strrchr(trace_path, '/');
    char name[512];
    snprintf(name, sizeof name, "%s: instructions per call stack", base ? base + 1 : trace_path);
    if (export_speedscope_write(f, out, name, "none") != 0) rc = 1;
    if (!to_stdout && fclose(out) != 0) rc = 1;
    flame_free(f);
    return rc;
}
