/* Unit test of sprof/caveats.h: the figures (incomplete stacks from the
 * profile's stats, guessed names from SPROF_FRAME_NAME_APPROX frames, each
 * sample counted once however many guessed frames its stack has), the
 * sentences and the short form, and nothing at all for a clean profile. */
#include <stdio.h>
#include <string.h>

#include "sprof/caveats.h"

static int failures;
#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
            failures++;                                                    \
        }                                                                  \
    } while (0)

static uint32_t frame(sprof_profile *p, const char *name, uint16_t flags)
{
    sprof_pframe f = { .name = name, .c_name = name, .file = "app.rb", .module = "app",
                       .kind = SPROF_KIND_IMETH, .cost = SPROF_COST_USER, .flags = flags };
    return sprof_profile_intern_frame(p, &f);
}

int main(void)
{
    sprof_profile p;
    sprof_profile_init(&p);
    uint32_t m = frame(&p, "main", 0), a = frame(&p, "Foo#bar", 0);
    uint32_t g1 = frame(&p, "Guess#one", SPROF_FRAME_NAME_APPROX);
    uint32_t g2 = frame(&p, "Guess#two", SPROF_FRAME_NAME_APPROX);
    uint32_t s1[] = { m, a };          /* 50 clean */
    uint32_t s2[] = { m, g1, g2 };     /* 20 with two guessed frames: counted once */
    uint32_t s3[] = { a, g1 };         /* 30 guessed and incomplete */
    sprof_profile_add_stack(&p, s1, 2, 50, 50, 0);
    sprof_profile_add_stack(&p, s2, 3, 20, 20, 0);
    sprof_profile_add_stack(&p, s3, 2, 30, 30, 0);
    p.stats.samples = 100;
    p.stats.incomplete = 30;

    sprof_caveats c;
    sprof_caveats_of(&p, &c);
    CHECK(c.samples == 100 && c.incomplete == 30 && c.approx_names == 50, "figures %llu %llu %llu",
          (unsigned long long)c.samples, (unsigned long long)c.incomplete, (unsigned long long)c.approx_names);
    char buf[1024];
    CHECK(sprof_caveat_text(&c, SPROF_CAVEAT_INCOMPLETE, buf, sizeof buf) == 1 &&
              strncmp(buf, "30 of 100 samples (30.0%) have an incomplete stack", 50) == 0,
          "incomplete: %s", buf);
    CHECK(sprof_caveat_text(&c, SPROF_CAVEAT_APPROX_NAMES, buf, sizeof buf) == 1 &&
              strncmp(buf, "50 of 100 samples (50.0%) have a frame whose Ruby name is a guess", 65) == 0,
          "approx: %s", buf);
    CHECK(sprof_caveats_short(&c, buf, sizeof buf) == 1 &&
              strcmp(buf, "warning: 30.0% of samples have incomplete stacks, 50.0% of samples have guessed "
                          "Ruby names") == 0,
          "short: %s", buf);
    char small[12];
    CHECK(sprof_caveats_short(&c, small, sizeof small) == 1 && strlen(small) == sizeof small - 1, "short cut");
    FILE *f = tmpfile();
    CHECK(f && sprof_caveats_print(f, "tool", "after side", &c) == 2, "print count");
    if (f) {
        rewind(f);
        CHECK(fgets(buf, sizeof buf, f) && strncmp(buf, "tool: warning: after side: 30 of 100", 36) == 0,
              "print line: %s", buf);
        fclose(f);
    }

    /* A stats figure beyond the samples (hostile or folded input) is capped. */
    p.stats.incomplete = 1000;
    sprof_caveats_of(&p, &c);
    CHECK(c.incomplete == 100, "cap: %llu", (unsigned long long)c.incomplete);
    sprof_profile_free(&p);

    /* Clean and empty profiles: nothing to say. */
    sprof_profile q;
    sprof_profile_init(&q);
    sprof_caveats_of(&q, &c);
    CHECK(c.samples == 0 && !sprof_caveats_short(&c, buf, sizeof buf) && buf[0] == '\0', "empty");
    for (int w = 0; w < SPROF_CAVEAT_COUNT; w++)
        CHECK(!sprof_caveat_text(&c, (enum sprof_caveat)w, buf, sizeof buf) && buf[0] == '\0', "empty %d", w);
    CHECK(sprof_caveats_print(stderr, "tool", NULL, &c) == 0, "empty print");
    sprof_profile_free(&q);
    if (failures)
        return 1;
    printf("caveats ok\n");
    return 0;
}
