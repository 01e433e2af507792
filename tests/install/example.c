/* A program built against an installed libgmsim through pkg-config: it
 * writes a trace, replays it through every policy and prints the load. */
#include <gmsim/gmsim.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    gm_error_t err;
    gm_store_t *s;
    gm_writer_t *w;
    if (argc != 2 || gm_store_open(argv[1], GM_STORE_WRITE, &s, &err) ||
        gm_writer_begin(s, "t", 0, &w, &err))
        return 1;
    gm_event_t ev[] = {{.op = GM_OP_ALLOC, .id = 0, .size = 1000},
                       {.op = GM_OP_ALLOC, .id = 1, .size = 3000},
                       {.op = GM_OP_FREE, .id = 0},
                       {.op = GM_OP_FREE, .id = 1}};
    for (int i = 0; i < 4; i++)
        if (gm_writer_add(w, &ev[i], &err))
            return 1;
    if (gm_writer_finish(w, &err))
        return 1;
    gm_replay_t *r;
    if (gm_replay_create(NULL, &r, &err))
        return 1;
    for (size_t i = 0; i < gm_policy_count(); i++) {
        gm_params_t p;
        if (gm_params_init(&p, gm_policy_at(i), &err) || gm_replay_add(r, &p, &err))
            return 1;
        gm_params_release(&p);
    }
    if (gm_replay_trace(r, s, "t", &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    printf("gmsim %s: load %llu over %zu policies\n", gm_version(),
           (unsigned long long)gm_replay_load(r), gm_replay_count(r));
    gm_replay_destroy(r);
    gm_store_close(s);
    return 0;
}
